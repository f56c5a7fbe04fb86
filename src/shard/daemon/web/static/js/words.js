import{a,b,c,d}from"./chunk-7O6BP6A4.js";import"./chunk-CGDGP5MS.js";export{c as answerer,d as resolutionText,a as statusWords,b as tokens};
