#!/usr/bin/env node
// Write a pprof profile the way another tool would (npm pprof-format's
// encoder: cpu/nanoseconds only, no thread labels, an inlined frame), to
// check that `framewalk report` reads foreign profiles.
//   node pprof-make.js OUT.pb.gz
'use strict';
const fs = require('fs');
const zlib = require('zlib');
const { Function, Label, Line, Location, Mapping, Profile, Sample, StringTable,
        ValueType } = require('pprof-format');

const st = new StringTable();
const cpu = new ValueType({ type: st.dedup('cpu'), unit: st.dedup('nanoseconds') });
const mapping = new Mapping({ id: 1, filename: st.dedup('/usr/bin/app'),
                              buildId: st.dedup('abc123'), hasFunctions: true });
const fn = (id, name, file) => new Function({ id, name: st.dedup(name),
                                              systemName: st.dedup(name),
                                              filename: st.dedup(file) });
const fmain = fn(1, 'main', 'app.c');
const fwork = fn(2, 'work', 'app.c');
const finl = fn(3, 'inlined_helper', 'helper.h');
const loc = (id, lines) => new Location({ id, mappingId: 1, address: 0x1000 + id,
  line: lines.map(([f, l]) => new Line({ functionId: f.id, line: l })) });
const lmain = loc(1, [[fmain, 10]]);
// line[0] is the inlined callee, the last line its caller
const lwork = loc(2, [[finl, 3], [fwork, 20]]);
const sample = (locs, ns) => new Sample({ locationId: locs.map((l) => l.id), value: [ns],
  label: [new Label({ key: st.dedup('unrelated'), str: st.dedup('x') })] });
const p = new Profile({
  sampleType: [cpu],
  sample: [sample([lwork, lmain], 30000000), sample([lmain], 10000000)],
  mapping: [mapping],
  location: [lmain, lwork],
  function: [fmain, fwork, finl],
  stringTable: st,
  periodType: cpu,
  period: 10000000,
  timeNanos: 1700000000000000000,
  durationNanos: 1000000000,
});
fs.writeFileSync(process.argv[2], zlib.gzipSync(p.encode()));
