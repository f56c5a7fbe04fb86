import{a}from"./chunk-IU4VKHPW.js";import"./chunk-NJQP5WKM.js";export{a as Controls};
