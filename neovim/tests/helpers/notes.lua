-- Notes the specs of how results read share: a note of several sections about undoing git
-- commits, under a folder with a space and a name with `[`, `#`, `%` and an accent (what the path
-- filter of a note's sections request must escape), and the query it answers.
local M = {}

local function paragraph(...)
  return table.concat({ ... }, " ")
end

M.GIT_NOTE = "My Notes/Über [draft] #1 50%.md"
M.GIT_TITLE = "Rewriting git history"
M.GIT_QUERY = "how do I undo the last git commit"

M.GIT_TEXT = table.concat({
  "# Rewriting git history",
  "",
  "Git lets you rewrite the commits of a branch before anybody else has them.",
  "",
  "## Undo the last commit",
  "",
  paragraph(
    "To undo the last commit but keep its changes, run git reset --soft HEAD~1: the commit",
    "is gone and its changes stay staged. git reset --hard HEAD~1 throws them away too.",
    "Use git reset --mixed HEAD~1 to keep the changes in the working tree but unstaged.",
    "Undoing the last commit this way only rewrites your local branch, so do it before",
    "you push; the reflog still remembers the undone commit for a while if you need it back."
  ),
  "",
  "## Undo a pushed commit",
  "",
  paragraph(
    "A commit that was already pushed is undone with git revert, which adds a new commit",
    "undoing the old one, so nobody's history is rewritten under them. To undo the last",
    "pushed commit run git revert HEAD and push again; to undo several, give git revert a",
    "range. A merge commit needs -m 1 to say which parent to keep. Never reset and force",
    "push a shared branch: everybody who pulled it would have to repair their own history."
  ),
  "",
  "## Fix the last commit message",
  "",
  paragraph(
    "git commit --amend replaces the last commit with a new one: fix its message or add a",
    "forgotten file before pushing. Stage the file first, then amend, and the last commit",
    "holds it as if it had always been there. Amending changes the commit's hash, so amend",
    "only a commit you have not pushed yet, or you will have to undo the damage with a force",
    "push that rewrites the branch for everybody else who already has the old commit."
  ),
  "",
  "## Lunch",
  "",
  "Pasta with tomatoes and basil, then an espresso.",
  "",
}, "\n")

return M
