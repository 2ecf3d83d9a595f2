// Hits in files that are not text: the server indexes a PDF's text layer and a saved web page's
// article, so such a hit's lines count that extracted text, not the file's. VS Code cannot open
// a PDF as a text document (openTextDocument throws on binary files), and in an HTML file the
// lines would point at the wrong place: these open in VS Code's own editor for the file (a PDF
// viewer where one is installed), at its start; the hit's breadcrumb (`Title > Page 2`) says where.
const EXTRACTED = [".pdf", ".html", ".htm"];

/** Whether a hit in the file at `uri` opens as text at its lines. */
export function opensAtLines(uri: string): boolean {
  const path = uri.split(/[?#]/, 1)[0].toLowerCase();
  return !EXTRACTED.some((end) => path.endsWith(end));
}
