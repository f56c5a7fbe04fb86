// One WebSocket to the daemon (PROTOCOL §3, §4.1): POST /bootstrap for a single-use ticket, open the
// socket offering ["shard.v1", "ticket.<t>"], check hello's protocol major, then hand every message
// to the app. Requests carry an id and resolve with their response. When the socket drops, waits
// 1, 2, 4 … 30 s between attempts and says so. The ticket lives only in this function's locals.
// /bootstrap wants the session cookie and, beside it, the origin proof the enrollment page left in
// this origin's localStorage (a page on another port of the host gets the cookie, never the proof).

export const CLIENT_PROTOCOL_MAJOR = 0;
export const PROOF_KEY = "shard.browserProof"; // the key pages.py's enrollment script writes
const PROOF_HEADER = "Shard-Browser-Proof";
const MAX_DELAY_S = 30;
const MAX_REASON = 400; // characters of the daemon's 401 line shown

function storedProof(): string | null {
  try {
    return localStorage.getItem(PROOF_KEY);
  } catch {
    return null; // storage disabled: /bootstrap says what to do
  }
}

export function backoffSeconds(attempt: number): number {
  return Math.min(MAX_DELAY_S, 2 ** attempt);
}

type Message = { type: string; id?: string; [field: string]: any }; // eslint-disable-line @typescript-eslint/no-explicit-any -- the wire is open
type Pending = { resolve: (reply: Message) => void; reject: (error: Error) => void };

export interface ConnectionEvents {
  onOpen(hello: Message, generation: number): void;
  onMessage(message: Message): void;
  onState(state: string, text: string): void;
}

export class Connection {
  onOpen: ConnectionEvents["onOpen"];
  onMessage: ConnectionEvents["onMessage"];
  onState: ConnectionEvents["onState"];
  ws: WebSocket | null;
  /** bumped on every hello: responses of an older socket are stale */
  generation: number;
  attempt: number;
  pending: Map<string, Pending>;
  nextId: number;
  timer: ReturnType<typeof setTimeout> | null;
  stopped: boolean;

  constructor({ onOpen, onMessage, onState }: ConnectionEvents) {
    this.onOpen = onOpen;
    this.onMessage = onMessage;
    this.onState = onState;
    this.ws = null;
    this.generation = 0; // bumped on every hello: responses of an older socket are stale
    this.attempt = 0;
    this.pending = new Map();
    this.nextId = 1;
    this.timer = null;
    this.stopped = false;
  }

  start(): void {
    this.connect();
  }

  state(name: string, text: string): void {
    this.onState(name, text);
  }

  async connect(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.state("connecting", "Connecting…");
    let ticket: string | null;
    try {
      const proof = storedProof();
      const headers: Record<string, string> = proof ? { [PROOF_HEADER]: proof } : {};
      const reply = await fetch("/bootstrap", { method: "POST", credentials: "same-origin", headers });
      if (reply.status === 401) {
        // the daemon's own line says why (not enrolled, revoked, enrolled by an older Shard, no proof)
        const why = (await reply.text()).trim().slice(0, MAX_REASON);
        this.state("unenrolled", why ? `This browser cannot connect: ${why}` : "This browser is not enrolled: open the link `shard daemon` printed (or run `shard web enroll`).");
        this.stopped = true;
        return;
      }
      if (!reply.ok) throw new Error(`bootstrap: HTTP ${reply.status}`);
      ticket = (await reply.json()).ticket;
    } catch {
      this.retry();
      return;
    }
    const scheme = location.protocol === "https:" ? "wss:" : "ws:";
    const ws = new WebSocket(`${scheme}//${location.host}/ws`, ["shard.v1", "ticket." + ticket]);
    ticket = null;
    this.ws = ws;
    let greeted = false;
    ws.onmessage = (event) => {
      let message: Message;
      try {
        message = JSON.parse(event.data);
      } catch {
        return;
      }
      if (!greeted) {
        greeted = this.greet(ws, message);
        return;
      }
      if (message.type === "response" && message.id && this.pending.has(message.id)) {
        const { resolve } = this.pending.get(message.id)!;
        this.pending.delete(message.id);
        resolve(message);
        return;
      }
      this.onMessage(message);
    };
    ws.onclose = () => {
      if (this.ws !== ws) return;
      this.ws = null;
      for (const { reject } of this.pending.values()) reject(new Error("connection closed"));
      this.pending.clear();
      if (!this.stopped) this.retry();
    };
  }

  greet(ws: WebSocket, hello: Message): boolean {
    const major = Number(String(hello.protocol_version || "").split(".")[0]);
    if (hello.type !== "hello" || major !== CLIENT_PROTOCOL_MAJOR) {
      this.stopped = true;
      this.state("incompatible", `The daemon speaks protocol ${hello.protocol_version}; this page speaks ${CLIENT_PROTOCOL_MAJOR}.x. Reload after upgrading.`);
      ws.close();
      return false;
    }
    this.attempt = 0;
    this.generation += 1;
    this.state("connected", `Connected (protocol ${hello.protocol_version}, daemon ${hello.server_version})`);
    this.onOpen(hello, this.generation);
    return true;
  }

  retry(): void {
    const delay = backoffSeconds(this.attempt);
    this.attempt += 1;
    this.state("reconnecting", `Disconnected: reconnecting in ${delay} s`);
    this.timer = setTimeout(() => this.connect(), delay * 1000);
  }

  // Close the socket as a network drop would (the "Reconnect now" button while waiting, and tests).
  drop(): void {
    if (this.ws) this.ws.close();
    else if (this.timer) this.connect();
  }

  get open(): boolean {
    return this.ws !== null && this.ws.readyState === WebSocket.OPEN;
  }

  send(message: Message): boolean {
    if (!this.open) return false;
    this.ws!.send(JSON.stringify(message));
    return true;
  }

  // A command with a correlation id; resolves with its response (success or not).
  request(message: Message): Promise<Message> {
    const id = `c${this.nextId++}`;
    return new Promise<Message>((resolve, reject) => {
      if (!this.send({ ...message, id })) {
        reject(new Error("not connected"));
        return;
      }
      this.pending.set(id, { resolve, reject });
    });
  }
}
