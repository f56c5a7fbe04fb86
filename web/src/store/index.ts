// The store's public face (also js/store.js in the bundle, for the browser tests).
export { Store } from "./store";
export { newAgent, isBusy, shownStatus, tokensIn, windowText, BUSY, type AgentState } from "./agent";
export { agentName, folderName, groupByFolder, children, descends } from "./names";
