import{a,b}from"../chunk-V3SMMPGV.js";import"../chunk-WTHRG2EG.js";import"../chunk-7O6BP6A4.js";import"../chunk-NJQP5WKM.js";import"../chunk-CGDGP5MS.js";export{a as AgentList,b as idleReason};
