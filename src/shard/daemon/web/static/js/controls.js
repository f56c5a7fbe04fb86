import{a}from"./chunk-TK5V76K3.js";import"./chunk-NJQP5WKM.js";export{a as Controls};
