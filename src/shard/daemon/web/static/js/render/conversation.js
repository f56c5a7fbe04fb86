import{a,b,c}from"../chunk-WIIGZZXF.js";import"../chunk-7O6BP6A4.js";import"../chunk-S4A6NLUC.js";import"../chunk-NJQP5WKM.js";export{c as Conversation,a as FIRST_WINDOW,b as PAGE};
