import{e as a,f as b,g as c}from"../chunk-WL36AVF3.js";import"../chunk-PL33YXDE.js";import"../chunk-CGDGP5MS.js";export{b as footer,c as footerText,a as renderDescriptor};
