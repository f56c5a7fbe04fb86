import { describe, expect, it } from "vitest";
import { createCommand, createdAgent } from "../src/store/create";
import { completable, recentFolders, suggestions } from "../src/store/folders";

describe("the create command", () => {
  it("is agent.create with the options chosen", () => {
    expect(createCommand({ cwd: " /p ", model: "x/1", mode: "", sandbox: "auto" })).toEqual({ type: "agent.create", cwd: "/p", model: "x/1", sandbox: "auto" });
  });
  it("is workspace.create for a new workspace, without a sandbox (it takes none)", () => {
    expect(createCommand({ cwd: "/p", mode: "plan", sandbox: "ask", workspace: true })).toEqual({ type: "workspace.create", cwd: "/p", mode: "plan" });
  });
  it("sends no sandbox it does not know", () => {
    expect(createCommand({ cwd: "/p", sandbox: "maybe" })).toEqual({ type: "agent.create", cwd: "/p" });
  });
  it("finds the agent in either answer", () => {
    expect(createdAgent({ agent_id: "agent-1" })).toBe("agent-1");
    expect(createdAgent(undefined)).toBeNull();
  });
});

describe("folder suggestions", () => {
  it("completes only what agent.create would take", () => {
    expect([completable("/ho"), completable("~"), completable("~/c"), completable("rel"), completable("")]).toEqual([true, true, true, false, false]);
  });
  it("offers the recent folders that match, then the daemon's completions, once each", () => {
    expect(suggestions("/home/me/pro", ["/home/me/proj", "/srv/other"], ["/home/me/proj", "/home/me/prod"])).toEqual(["/home/me/proj", "/home/me/prod"]);
    expect(suggestions("", ["/a", "/b"], [])).toEqual(["/a", "/b"]);
  });
  it("lists the agents' folders newest first, then those remembered", () => {
    expect(recentFolders(["/old", "/new", "/old"], ["/made-here", "/new"])).toEqual(["/old", "/new", "/made-here"]);
  });
});

describe("an agent on another host", () => {
  it("sends the host with the folder, on agent.create and workspace.create", () => {
    expect(createCommand({ cwd: "/srv/app", host: "box" })).toEqual({ type: "agent.create", cwd: "/srv/app", host: "box" });
    expect(createCommand({ cwd: "/srv/app", host: "box", workspace: true })).toEqual({ type: "workspace.create", cwd: "/srv/app", host: "box" });
    expect(createCommand({ cwd: "/srv/app", host: "" })).toEqual({ type: "agent.create", cwd: "/srv/app" });
  });
});
