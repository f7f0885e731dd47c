// Time an ONNX model in ONNX Runtime (npm's onnxruntime-node, its CPU
// library): graph optimisations on, N intra-op threads, one input from a
// .npy file (f32, C order).  Prints one JSON line: the median of timed
// runs over at least MIN_TIME seconds, and the first output as base64 f32
// for the caller to compare.  The runs are timed by the wall clock, or by
// the process's CPU clock (all its threads) when CLOCK is "cpu".
//
//   node bench/ort_time.mjs MODEL.onnx INPUT.npy THREADS MIN_TIME [CLOCK]
// (NODE_PATH names the node_modules folder that holds onnxruntime-node;
// bench/ort_node.py runs this script)
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";

const require = createRequire(import.meta.url);
const ort = require("onnxruntime-node");
const [model, npy, threads, minTime, clock] = process.argv.slice(2);
// Milliseconds: user and system time of the process, or the wall clock.
const now = clock === "cpu"
	? () => { const u = process.cpuUsage(); return (u.user + u.system) / 1e3; }
	: () => performance.now();

function readNpy(path) {
	const b = readFileSync(path);
	const hlen = b.readUInt16LE(8);
	const header = b.toString("latin1", 10, 10 + hlen);
	if (!header.includes("'<f4'"))
		throw new Error(path + ": only f32 inputs");
	const shape = header.match(/\(([^)]*)\)/)[1].split(",")
		.map((s) => s.trim()).filter((s) => s.length).map(Number);
	const data = new Float32Array(b.buffer.slice(b.byteOffset + 10 + hlen,
		b.byteOffset + b.length));
	return new ort.Tensor("float32", data, shape);
}

const session = await ort.InferenceSession.create(model, {
	graphOptimizationLevel: "all",
	intraOpNumThreads: Number(threads),
	interOpNumThreads: 1,
	executionMode: "sequential",
});
const feeds = { [session.inputNames[0]]: readNpy(npy) };
let out = await session.run(feeds);
const times = [];
let total = 0;
while (total < Number(minTime) * 1e3 || times.length < 3) {
	const t = now();
	out = await session.run(feeds);
	const dt = now() - t;
	times.push(dt);
	total += dt;
}
times.sort((a, b) => a - b);
const first = out[session.outputNames[0]].data;
console.log(JSON.stringify({
	median_ms: times[times.length >> 1],
	output: Buffer.from(first.buffer, first.byteOffset,
		first.byteLength).toString("base64"),
}));
