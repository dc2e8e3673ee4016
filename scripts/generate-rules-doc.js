// Writes RULES.md from the rule objects (run through `npm run rules:doc`, which builds first).
const fs = require('fs');
const path = require('path');
const { RULES_DOCUMENT_FILE, rulesDocument } = require('../dist/lib/rules/rules-document');

const file = path.join(__dirname, '..', RULES_DOCUMENT_FILE);
fs.writeFileSync(file, rulesDocument());
console.log(`wrote ${RULES_DOCUMENT_FILE}`);
