// Paths relative to this checkout (CI runs in a fresh clone elsewhere, never assume /work/main).
const path = require("node:path");
const fs = require("node:fs");

const EXT_DIR = path.resolve(__dirname, "..", "..");
const REPO = path.resolve(EXT_DIR, "..");
const KBLS = process.env.KBLS_BIN || path.join(REPO, ".venv", "bin", "kbls");

function kblsAvailable() {
  try {
    fs.accessSync(KBLS, fs.constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

module.exports = { EXT_DIR, REPO, KBLS, kblsAvailable };
