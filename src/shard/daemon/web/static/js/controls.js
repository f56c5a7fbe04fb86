import{a}from"./chunk-S5TE6D2C.js";import"./chunk-NJQP5WKM.js";import"./chunk-CGDGP5MS.js";export{a as Controls};
