import{d as a,e as b,f as c}from"../chunk-PYBXR7CD.js";import"../chunk-S4A6NLUC.js";import"../chunk-NJQP5WKM.js";export{c as Conversation,a as FIRST_WINDOW,b as PAGE};
