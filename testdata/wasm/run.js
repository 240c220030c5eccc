// run.js WASM SECONDS: instantiates the WebAssembly module WASM and calls
// its run export for SECONDS seconds (TestPerfDataWasm).
const fs = require('fs');
const [file, seconds] = process.argv.slice(2);
const mod = new WebAssembly.Module(fs.readFileSync(file));
const instance = new WebAssembly.Instance(mod, {});
const end = Date.now() + 1000 * Number(seconds);
let sum = 0;
while (Date.now() < end) sum += instance.exports.run(25);
console.log(sum);
