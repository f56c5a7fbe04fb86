import{a,b,c,d}from"./chunk-GC7JVXJ7.js";import"./chunk-CGDGP5MS.js";export{c as answerer,d as resolutionText,a as statusWords,b as tokens};
