"""Files a vault holds besides markdown, turned into the same `ParsedNote` the markdown parser
makes: org-mode (`org`, text), PDF (`pdf`, one section per page) and saved web pages (`html`,
the article only). `documents` is the one entry the indexer and the readers call."""
