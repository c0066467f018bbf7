#!/usr/bin/env bash
# notes_refs.sh ROOT -- pointers from the code into bench/notes/ name one entry file:
# 1. every "bench/notes/NAME.md" outside bench/notes* names a file that exists;
# 2. no file cites a version through the index ("bench/notes.md v31", `bench/notes.md`, "v25",
#    "notes v22", also split over two lines): it names bench/notes/v31.md instead.
# Files whose text marlin-gen copies into generated/ (templates/*/kernel.cu.tpl,
# templates/*/include/, templates/common/, templates/formats/) must not change their emitted
# text, so their old citations stay; for them the cited entry must exist (bench/notes/vN.md, or
# a "### wgmma vN" heading under bench/notes/). Each violation is printed as file:line and the
# reason. Then the same check on a small tree with each kind of violation planted, which must
# each be found (a checker that cannot fail proves nothing).
. "$(dirname "$0")/../gen/lib.sh"
root=$1

# The files to read under TREE, one path a line: git's list in a checkout (tracked and new,
# not ignored: no build folders), else every file outside .git and build trees (a CMakeCache.txt);
# never the notes, generated/, fuzz inputs or this script (its examples).
list_files() {
  local tree=$1
  if [ -e "$tree/.git" ] && git -C "$tree" ls-files -co --exclude-standard >"$tmp/files.all" 2>/dev/null; then
    :
  else
    (cd "$tree" && find . \( -name .git -o -type d -exec test -e '{}/CMakeCache.txt' ';' \) -prune -o \
      -type f -printf '%P\n') >"$tmp/files.all"
  fi
  grep -vE '^(bench/notes\.md$|bench/notes/|generated/|tests/fuzz/corpus/|tests/scripts/notes_refs\.sh$)' "$tmp/files.all" |
    LC_ALL=C sort || true
}

# check TREE: prints the violations, one a line (none: nothing).
check() {
  local tree=$1 f text=()
  mapfile -t files < <(list_files "$tree")
  ((${#files[@]} > 0)) || fail "no files under $tree"
  for f in "${files[@]}"; do
    if [ -f "$tree/$f" ] && grep -qI . "$tree/$f"; then text+=("$f"); fi # text, not deleted
  done
  (cd "$tree" && awk '
    function exists(p) { return (getline _ < p) >= 0 ? (close(p) || 1) : 0 }
    # Is tag ("v31" or "wgmma v4") an entry under bench/notes/?
    function entry(tag,   n, cmd, line, found) {
      if (tag ~ /^v[0-9]+$/) return exists("bench/notes/" tag ".md")
      n = tag; sub(/^wgmma[[:space:]]+/, "", n)
      cmd = "cat bench/notes/*.md 2>/dev/null"
      found = 0
      while ((cmd | getline line) > 0)
        if (line ~ /^#+ wgmma / && (line " ") ~ ("[ ,]" n "[ ,]")) found = 1
      close(cmd)
      return found
    }
    BEGIN {
      lead = "(notes\\.md[`\"\047,]*[[:space:]]*[(\"\047`]*|notes[[:space:]]+)"
      cite = lead "(wgmma[[:space:]]+)?v[0-9]+"
      wrapped = "notes\\.md[`\"\047,]*[[:space:]]*[(\"\047`]*$"
    }
    FNR == 1 {
      file = FILENAME; prev = ""
      emitted = (file ~ /^templates\/[^\/]+\/kernel\.cu\.tpl$/ || file ~ /^templates\/[^\/]+\/include\// ||
                 file ~ /^templates\/common\// || file ~ /^templates\/formats\//)
    }
    {
      rest = $0
      while (match(rest, /bench\/notes\/[A-Za-z0-9_.-]*[A-Za-z0-9_-]\.md/)) {
        p = substr(rest, RSTART, RLENGTH)
        if (!exists(p)) printf "%s:%d: %s does not exist\n", file, FNR, p
        rest = substr(rest, RSTART + RLENGTH)
      }
      # A citation on this line, or one that a line break splits after "notes.md".
      text = ""
      if (match($0, cite)) text = substr($0, RSTART, RLENGTH)
      else if (prev ~ wrapped) {
        cur = $0; sub(/^[[:space:]]*(\/\/|\/\*|\*|--|#)?[[:space:]]*/, "", cur)
        if (match("notes.md " cur, cite) && RSTART == 1) text = substr("notes.md " cur, 1, RLENGTH)
      }
      if (text != "") {
        tag = text; sub("^" lead, "", tag)
        if (!emitted)
          printf "%s:%d: cites \"%s\" through the index: name its file (bench/notes/vN.md)\n", file, FNR, tag
        else if (!entry(tag))
          printf "%s:%d: cites \"%s\", which no file under bench/notes/ holds\n", file, FNR, tag
      }
      prev = $0
    }' "${text[@]}")
}

bad=$(check "$root")
[ -z "$bad" ] || fail "pointers into the notes that name no entry file:"$'\n'"$bad"

# The checker finds each kind of violation, and passes what is allowed.
t=$tmp/tree
mkdir -p "$t/bench/notes" "$t/src" "$t/templates/common" "$t/templates/fam"
echo '# index' >"$t/bench/notes.md"
echo '### v1 -- first' >"$t/bench/notes/v1.md"
printf '### wgmma v1, v2 -- first\n### wgmma v3 -- second\n' >"$t/bench/notes/v7.md"
cat >"$t/src/ok.c" <<'EOF'
/* measured (bench/notes/v1.md item 2; bench/notes/v7.md, "wgmma v3"); GPTQ v1 checkpoints;
 * ld.shared.v4; the index: bench/notes.md. */
EOF
cat >"$t/templates/common/ok.cuh" <<'EOF'
// emitted text keeps its citations (bench/notes.md v1; bench/notes.md "wgmma v2")
EOF
echo '// (bench/notes/v99.md)' >"$t/src/missing.c"
echo '/* slower (bench/notes.md v1) */' >"$t/src/index.c"
echo 'decode 2.4x (`bench/notes.md`, "v1")' >"$t/src/quoted.md"
printf -- '-- measured (bench/notes.md\n-- v1, after 16 other kernels)\n' >"$t/src/split.lua"
echo '# an A/B (notes v1 item 1)' >"$t/src/bare.sh"
echo '// (bench/notes.md "wgmma v4")' >"$t/templates/common/gone.cuh"
echo '// (bench/notes.md v98)' >"$t/templates/fam/kernel.cu.tpl"
found=$(check "$t")
for want in "src/missing.c:1: bench/notes/v99.md does not exist" \
  'src/index.c:1: cites "v1" through the index' 'src/quoted.md:1: cites "v1" through the index' \
  'src/split.lua:2: cites "v1" through the index' 'src/bare.sh:1: cites "v1" through the index' \
  'templates/common/gone.cuh:1: cites "wgmma v4", which no file' \
  'templates/fam/kernel.cu.tpl:1: cites "v98", which no file'; do
  expect_in "$found" "$want" "a planted violation"
done
n=$(printf '%s\n' "$found" | wc -l)
[ "$n" -eq 7 ] || fail "expected 7 violations in the planted tree, got $n:"$'\n'"$found"
echo "notes_refs: ok"
