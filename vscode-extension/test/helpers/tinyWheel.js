// Builds a tiny wheel named `kbls` whose console script prints `kbls <version>` (or another
// answer) and, as `kbls serve`, answers just enough LSP (initialize, shutdown, exit) for a client
// to start and stop it: the installer and the upgrade offer are tested with a real Python, venv
// and pip, offline and in seconds.
const { execFileSync } = require("node:child_process");
const path = require("node:path");

const BUILD = String.raw`
import base64, hashlib, sys, zipfile
out, version, answer = sys.argv[1], sys.argv[2], sys.argv[3]
CLI = """import json, sys

def _serve():
    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
    while True:
        length = 0
        while True:
            line = stdin.readline()
            if not line:
                return 0
            if line in (b"\\r\\n", b"\\n"):
                break
            if line.lower().startswith(b"content-length:"):
                length = int(line.split(b":")[1])
        msg = json.loads(stdin.read(length))
        if msg.get("method") == "exit":
            return 0
        if "id" in msg and "method" in msg:
            result = {"capabilities": {}} if msg["method"] == "initialize" else None
            body = json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": result}).encode()
            stdout.write(b"Content-Length: %%d\\r\\n\\r\\n" %% len(body) + body)
            stdout.flush()

def main():
    if sys.argv[1:2] == ["serve"]:
        return _serve()
    print(%r)
    return 0
"""
files = {
    "kbls/__init__.py": "",
    "kbls/cli.py": CLI % answer,
    f"kbls-{version}.dist-info/METADATA": f"Metadata-Version: 2.1\nName: kbls\nVersion: {version}\n",
    f"kbls-{version}.dist-info/WHEEL": "Wheel-Version: 1.0\nGenerator: kbls-tests\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
    f"kbls-{version}.dist-info/entry_points.txt": "[console_scripts]\nkbls = kbls.cli:main\n",
}
record = []
with zipfile.ZipFile(out, "w") as z:
    for name, text in files.items():
        data = text.encode()
        z.writestr(name, data)
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        record.append(f"{name},sha256={digest},{len(data)}")
    record.append(f"kbls-{version}.dist-info/RECORD,,")
    z.writestr(f"kbls-{version}.dist-info/RECORD", "\n".join(record) + "\n")
`;

/** Writes `<dir>/server/kbls-<version>-py3-none-any.whl` and returns its path. */
function tinyWheel(dir, version, { python = "python3", answer = `kbls ${version}` } = {}) {
  const file = path.join(dir, "server", `kbls-${version}-py3-none-any.whl`);
  require("node:fs").mkdirSync(path.dirname(file), { recursive: true });
  execFileSync(python, ["-c", BUILD, file, version, answer], { timeout: 30000 });
  return file;
}

module.exports = { tinyWheel };
