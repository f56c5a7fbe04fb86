import{a,b,c}from"../chunk-AV5FVSSM.js";import"../chunk-WTHRG2EG.js";import"../chunk-7O6BP6A4.js";import"../chunk-CGDGP5MS.js";export{b as AgentList,a as idleReason,c as mountAgentList};
