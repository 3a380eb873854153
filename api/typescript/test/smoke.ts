/**
 * Runs against a live server (GRAPHMEM_URL, GRAPHMEM_API_KEY, GRAPHMEM_OWNER): adds messages,
 * lists owners, lists and reads sessions, searches (also filtered by metadata), exports the owner
 * page by page, forgets a session and the messages with some metadata,
 * and meets a 404 and a 422. Prints what it saw as one JSON line.
 */
import { GraphMem, InvalidInputError, NotFoundError, type MessageIn } from "../src/index.js";

const owner = process.env.GRAPHMEM_OWNER ?? "ts-smoke";
const gm = new GraphMem({ baseUrl: process.env.GRAPHMEM_URL, apiKey: process.env.GRAPHMEM_API_KEY,
                          backoffMs: 10 });

const turn = (i: number, text: string): MessageIn => ({
  id: `${owner}/m${i}`, owner, session_id: "s/1", speaker: i % 2 ? "bob" : "alice", text,
  timestamp: `2024-05-08T13:5${i}:00+02:00`, metadata: { topic: i < 2 ? "pets" : "travel" },
});

const report = await gm.addMessages([
  turn(0, "I adopted a greyhound called Pixel."), turn(1, "Pixel loves the beach at dawn."),
  turn(2, "We are flying to Tokyo in October."),
]);
const again = await gm.addMessages([turn(0, "I adopted a greyhound called Pixel.")]);
const session = await gm.sessionMessages("s/1", { owner });
const found = await gm.search({ query: "what is the dog called?", owner, k: 2 });
const one = await gm.getMessage(`${owner}/m2`);
const travel = await gm.search({ query: "what is the dog called?", owner, k: 2,
                                 metadata: { topic: ["travel", "work"] } });

let notFound: unknown = null;
try {
  await gm.getMessage(`${owner}/missing`);
} catch (err) {
  if (err instanceof NotFoundError) notFound = { status: err.status, title: err.title };
}
let invalid: unknown = null;
try {
  await gm.addMessages([{ ...turn(9, "no offset"), timestamp: "2024-05-08T13:59:00" }]);
} catch (err) {
  if (err instanceof InvalidInputError) invalid = { status: err.status, field: err.field };
}
await gm.addMessages([{ ...turn(3, "Please forget this aside."), session_id: "aside" }]);
const sessions = await gm.sessions(owner);
const owners = await gm.owners({ after: owner.slice(0, -1), limit: 200 });
const exported: string[] = [];
for await (const record of gm.exportAll(owner, 2)) exported.push(`${record.kind}:${record.id}`);
const forgot = await gm.forgetSession("aside", owner);
const forgotTravel = await gm.forgetMessages({ owner, metadata: { topic: "travel" } });
const gone = await gm.deleteOwner(owner);

console.log(JSON.stringify({
  created: report.created, duplicates: again.duplicates, session: session.map((m) => m.id),
  hits: found.hits.filter((h) => h.nucleus).map((h) => h.id), utc: one.timestamp,
  notFound, invalid, deleted: gone.messages,
  sessions: sessions.map((x) => [x.session_id, x.message_count]),
  listed: owners.some((x) => x.owner === owner),
  forgot: [forgot.kind, forgot.removed?.messages],
  filtered: travel.hits.map((h) => [h.id, h.metadata?.topic]),
  forgotTravel: [forgotTravel.kind, forgotTravel.removed?.messages],
  exported: exported.filter((x) => x.startsWith("message:")),
}));
