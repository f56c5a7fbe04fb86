import{a,b}from"./chunk-DSD6NX3F.js";import"./chunk-WIIGZZXF.js";import"./chunk-7O6BP6A4.js";import"./chunk-S4A6NLUC.js";import"./chunk-NJQP5WKM.js";export{b as AgentState,a as BUSY};
