import{a,b,c,d}from"./chunk-AUPG5MHE.js";import"./chunk-CGDGP5MS.js";export{a as CLIENT_PROTOCOL_MAJOR,d as Connection,b as PROOF_KEY,c as backoffSeconds};
