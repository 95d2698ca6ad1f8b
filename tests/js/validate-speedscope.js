#!/usr/bin/env node
// Validate a speedscope JSON file against the file-format schema shipped in
// the npm speedscope package, with ajv. Exit 0 and print "valid", or exit 1
// and print the errors.
//   node validate-speedscope.js FILE.json
'use strict';
const fs = require('fs');
const path = require('path');
const Ajv = require('ajv');

const schemaPath = path.join(path.dirname(require.resolve('speedscope/package.json')),
                             'dist', 'release', 'file-format-schema.json');
const schema = JSON.parse(fs.readFileSync(schemaPath, 'utf8'));
const ajv = new Ajv({ allErrors: true, strict: false });
const validate = ajv.compile(schema);
const doc = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));
if (!validate(doc)) {
  console.log(JSON.stringify(validate.errors, null, 1));
  process.exit(1);
}
console.log('valid');
