#!/usr/bin/env node
// Decode a pprof file with the npm pprof-format decoder (an implementation
// independent of framewalk's protobuf-c one) and print what it holds as JSON,
// names resolved, for tests/functional/test_formats.py to check.
//   node pprof-decode.js FILE.pb.gz
'use strict';
const fs = require('fs');
const zlib = require('zlib');
const { Profile } = require('pprof-format');

let data = fs.readFileSync(process.argv[2]);
if (data[0] === 0x1f && data[1] === 0x8b) data = zlib.gunzipSync(data);
const p = Profile.decode(data);
const str = (i) => p.stringTable.strings[Number(i)];
const num = (v) => Number(v);

const fns = new Map(p.function.map((f) => [num(f.id), f]));
const maps = new Map(p.mapping.map((m) => [num(m.id), m]));
const locs = new Map(p.location.map((l) => [num(l.id), l]));

function frames(locId) {
  const l = locs.get(num(locId));
  if (!l) throw new Error(`missing location ${locId}`);
  const m = maps.get(num(l.mappingId));
  return l.line.map((ln) => {
    const f = fns.get(num(ln.functionId));
    if (!f) throw new Error(`missing function ${ln.functionId}`);
    return { name: str(f.name), file: str(f.filename), line: num(ln.line),
             mapping: m ? str(m.filename) : null, buildId: m ? str(m.buildId) : null };
  });
}

const out = {
  sampleTypes: p.sampleType.map((t) => [str(t.type), str(t.unit)]),
  periodType: p.periodType ? [str(p.periodType.type), str(p.periodType.unit)] : null,
  period: num(p.period),
  timeNanos: num(p.timeNanos),
  durationNanos: num(p.durationNanos),
  comments: p.comment.map(str),
  mappings: p.mapping.map((m) => ({ id: num(m.id), filename: str(m.filename),
                                    buildId: str(m.buildId) })),
  samples: p.sample.map((s) => {
    const labels = {};
    for (const l of s.label) labels[str(l.key)] = num(l.str) ? str(l.str) : num(l.num);
    return { stack: s.locationId.flatMap(frames), values: s.value.map(num), labels };
  }),
};
process.stdout.write(JSON.stringify(out) + '\n');
