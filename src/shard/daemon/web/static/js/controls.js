import{a}from"./chunk-IHMATZKN.js";import"./chunk-PL33YXDE.js";import"./chunk-CGDGP5MS.js";export{a as Controls};
