import{e as a,f as b,g as c}from"../chunk-WPLFRDSZ.js";import"../chunk-NJQP5WKM.js";import"../chunk-CGDGP5MS.js";export{b as footer,c as footerText,a as renderDescriptor};
