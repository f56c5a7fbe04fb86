import{a,b}from"../chunk-S4A6NLUC.js";import"../chunk-NJQP5WKM.js";export{b as footer,a as renderDescriptor};
