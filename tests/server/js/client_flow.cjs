// LangGraph's JavaScript client (@langchain/langgraph-sdk) against an actorgraph server.
//
// Run by tests/server/test_server_js.py: `node client_flow.cjs URL`, with NODE_PATH naming the
// node_modules folder the pinned client was installed into. It drives the `chat` graph of
// tests/server_graphs.py (greet -> ask, which pauses with a question -> finish) as a front end
// would, and prints one JSON object of what it saw; the Python test judges it.
"use strict";

const { Client } = require("@langchain/langgraph-sdk");
const { StreamOrchestrator } = require("@langchain/langgraph-sdk/ui");

const apiUrl = process.argv[2];
const HI = { messages: [{ role: "user", content: "hi" }], n: 1 };

async function collect(parts) {
  const seen = [];
  for await (const part of parts) {
    seen.push({ event: part.event, data: part.data });
  }
  return seen;
}

// runs.stream with values + messages-tuple, a pause, and an answer by command: {resume}.
async function streamed(client) {
  const thread = await client.threads.create();
  const first = await collect(
    client.runs.stream(thread.thread_id, "chat", {
      input: HI,
      streamMode: ["values", "messages-tuple"],
    }),
  );
  const paused = await client.threads.get(thread.thread_id);
  const resumed = await collect(
    client.runs.stream(thread.thread_id, "chat", {
      command: { resume: "yes" },
      streamMode: ["values", "messages-tuple"],
    }),
  );
  const state = await client.threads.getState(thread.thread_id);
  const history = await client.threads.getHistory(thread.thread_id, { limit: 100 });
  const ended = await client.threads.get(thread.thread_id);
  const runs = await client.runs.list(thread.thread_id);
  return {
    first,
    paused: { status: paused.status, interrupts: paused.interrupts },
    resumed,
    state: { values: state.values, next: state.next, checkpoint: state.checkpoint },
    history: history.map((h) => ({ values: h.values, next: h.next, checkpoint: h.checkpoint })),
    ended: { status: ended.status },
    runs: runs.map((r) => r.status),
  };
}

// A background run (runs.create) followed by runs.joinStream, then runs.join.
async function joined(client) {
  const thread = await client.threads.create();
  const run = await client.runs.create(thread.thread_id, "slow", {
    input: { sleep: 0.3, n: 1 },
    streamMode: ["values"],
  });
  const parts = await collect(client.runs.joinStream(thread.thread_id, run.run_id));
  const result = await client.runs.join(thread.thread_id, run.run_id);
  const after = await client.runs.get(thread.thread_id, run.run_id);
  return { parts, result, status: after.status };
}

// What React's useStream does, through its framework-free core (StreamOrchestrator): submit a
// message, see the question, answer it with a command, and read the thread's history.
async function orchestrated(client) {
  const orchestrator = new StreamOrchestrator(
    { assistantId: "chat", client, fetchStateHistory: true, messagesKey: "messages" },
    {
      getClient: () => client,
      getAssistantId: () => "chat",
      getMessagesKey: () => "messages",
    },
  );
  const shown = []; // what a front end would render, each time the orchestrator says it changed
  orchestrator.subscribe(() => {
    const text = orchestrator.messages.map((m) => `${m.type}:${m.content}`).join(" | ");
    if (shown[shown.length - 1] !== text) shown.push(text);
  });
  orchestrator.initThreadId(undefined);
  await orchestrator.submit(HI, { streamMode: ["messages-tuple"] });
  await settled(orchestrator);
  const asked = {
    threadId: orchestrator.threadId,
    interrupt: orchestrator.interrupt ?? null,
    messages: orchestrator.messages.map((m) => ({ type: m.type, content: m.content })),
    error: describe(orchestrator.error),
  };
  await orchestrator.submit(undefined, { command: { resume: "yes" } });
  await settled(orchestrator);
  const done = {
    values: orchestrator.values,
    interrupt: orchestrator.interrupt ?? null,
    messages: orchestrator.messages.map((m) => ({ type: m.type, content: m.content })),
    history: (orchestrator.historyData.data ?? []).length,
    error: describe(orchestrator.error),
  };
  orchestrator.dispose();
  return { asked, done, shown };
}

// The orchestrator refetches the thread's history after a run: wait (bounded) until it is in.
async function settled(orchestrator) {
  for (let i = 0; i < 200; i += 1) {
    if (!orchestrator.isLoading && !orchestrator.isThreadLoading && !orchestrator.historyData.isLoading) {
      return;
    }
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error("the orchestrator did not settle within 5 s");
}

function describe(error) {
  if (error == null) return null;
  return String(error && error.message ? error.message : error);
}

async function main() {
  const client = new Client({ apiUrl, callerOptions: { maxRetries: 0 } });
  const report = {
    streamed: await streamed(client),
    joined: await joined(client),
    orchestrated: await orchestrated(client),
  };
  process.stdout.write(`${JSON.stringify(report)}\n`);
}

main().catch((error) => {
  process.stderr.write(`${error && error.stack ? error.stack : error}\n`);
  process.exit(1);
});
