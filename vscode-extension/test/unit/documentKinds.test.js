// Which hits open as text at their lines: not a PDF's or a saved web page's (their lines count
// the server's extracted text, and VS Code cannot open a PDF as text).
const test = require("node:test");
const assert = require("node:assert/strict");
const { opensAtLines } = require("../../out/documentKinds.js");

test("markdown, org and text hits open at their lines", () => {
  for (const uri of ["file:///notes/a.md", "file:///n/%C3%89t%C3%A9%202026/jardin.org", "file:///n/x.txt", "file:///n/pdf.md"]) {
    assert.equal(opensAtLines(uri), true, uri);
  }
});

test("PDF and web page hits open in VS Code's editor for the file, under odd names too", () => {
  for (const uri of ["file:///n/manuel%20de%20la%20pompe.pdf", "file:///n/Saved/Page.HTML", "file:///n/a%23b.htm", "file:///n/x.pdf#page=2"]) {
    assert.equal(opensAtLines(uri), false, uri);
  }
});
