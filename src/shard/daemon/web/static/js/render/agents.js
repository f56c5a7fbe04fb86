import{a,b}from"../chunk-L5QMRJWP.js";import"../chunk-7O6BP6A4.js";import"../chunk-NJQP5WKM.js";export{a as AgentList,b as idleReason};
