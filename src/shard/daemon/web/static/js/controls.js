import{a}from"./chunk-YRKX43UU.js";import"./chunk-4H5MHQKP.js";import"./chunk-76PVRDDG.js";import"./chunk-CGDGP5MS.js";export{a as Controls};
