# layering.awk -- layering_check.sh's scanner (see there). Reads every file twice: pass 1
# collects the functions each .c/.cu file defines, pass 2 checks includes and uses. Variables:
#   src       runtime/src (as passed in the file names)
#   layers    the LAYERS folders, lowest first, space-separated
#   internal  the one internal header bench/ and tools/ may include (under src)
#   names     the text of that header (the names bench/ and tools/ may use)
#   tools     runtime/tools, whose files must not depend on each other in a circle
# A file under src/<layer>/ is that layer's; under src itself, above every layer; anything else
# (bench/, runtime/tools/) a client, which sees src only through `internal`. Prints one
# "file:line: why" per violation, then "arrows N" and "tools-cycle ..." lines; exits 0.

function layer_of(path,    rest, i) {
  if (index(path, src "/") != 1) return "(client)"
  rest = substr(path, length(src) + 2)
  i = index(rest, "/")
  return i ? substr(rest, 1, i - 1) : "(src)"
}

function rank_of(layer) {
  if (layer in rank) return rank[layer]
  return nlayers + 1 # src/ itself, or a folder LAYERS lacks (reported on its own)
}

function exists(path,    line, r) {
  r = (getline line < path)
  close(path)
  return r >= 0
}

function dir_of(path) { return path ~ /\// ? substr(path, 1, match(path, /\/[^\/]*$/) - 1) : "." }

# The line without comments, string and character literals (state: in_comment).
function strip(line,    out, c, c2, q) {
  out = ""
  while (line != "") {
    if (in_comment) {
      c = index(line, "*/")
      if (!c) return out
      line = substr(line, c + 2)
      in_comment = 0
      continue
    }
    c = substr(line, 1, 1)
    c2 = substr(line, 1, 2)
    if (c2 == "/*") { in_comment = 1; line = substr(line, 3); out = out " "; continue }
    if (c2 == "//") return out
    if (c == "\"" || c == "'") {
      q = c
      line = substr(line, 2)
      while (line != "" && substr(line, 1, 1) != q)
        line = substr(line, substr(line, 1, 1) == "\\" ? 3 : 2)
      line = substr(line, 2)
      out = out q q
      continue
    }
    out = out c
    line = substr(line, 2)
  }
  return out
}

# Whether `text` has `name` as a whole word (mgen__family does not list mgen__fam).
function mentions(text, name,    i, before, after) {
  while ((i = index(text, name)) > 0) {
    before = i > 1 ? substr(text, i - 1, 1) : " "
    after = substr(text, i + length(name), 1)
    if (before !~ /[A-Za-z0-9_]/ && after !~ /[A-Za-z0-9_]/) return 1
    text = substr(text, i + length(name))
  }
  return 0
}

function report(file, line, why) {
  print file ":" line ": " why
  bad++
}

BEGIN {
  nlayers = split(layers, order, " ")
  for (i = 1; i <= nlayers; i++) rank[order[i]] = i
}

FNR == 1 {
  if (FILENAME in seen) pass = 2; else pass = 1
  seen[FILENAME] = 1
  in_comment = 0
  pending = ""
  layer = layer_of(FILENAME)
  is_code = FILENAME ~ /\.(c|cu)$/
}

# Pass 1: non-static functions defined at column 0 of a .c/.cu file (a name followed by "(" on
# a line that starts with a type, its signature continued on indented lines; a definition once
# "{" comes before ";").
pass == 1 {
  text = strip($0)
  if (!is_code) next
  if (text ~ /^[^ \t]/) pending = "" # a signature continues on indented lines only
  if (text ~ /^[A-Za-z_]/ && text !~ /^(static|typedef|extern|struct|enum|union|return|else|if|for|while|do|switch|case)[^A-Za-z0-9_]/ &&
      match(text, /[A-Za-z_][A-Za-z0-9_]*\(/)) {
    pending = substr(text, RSTART, RLENGTH - 1)
    text = substr(text, RSTART + RLENGTH)
    if (pending !~ /[a-z]/) pending = "" # a macro's use (MGEN_ACT_LIST(X)), not a function
  }
  if (pending != "") {
    b = index(text, "{"); s = index(text, ";")
    if (b && (!s || b < s)) {
      if (!(pending in def)) { def[pending] = FILENAME; def_line[pending] = FNR }
      else if (def[pending] != FILENAME) dup[pending] = 1 # main, or a name two programs define
      pending = ""
    }
    else if (s) pending = ""
  }
  next
}

# Pass 2: includes and uses.
{
  raw = $0
  was_comment = in_comment
  text = strip(raw)
  if (!was_comment && match(raw, /^[ \t]*#[ \t]*include[ \t]*"[^"]+"/)) {
    inc = raw
    sub(/^[ \t]*#[ \t]*include[ \t]*"/, "", inc)
    sub(/".*$/, "", inc)
    check_include(inc)
    next
  }
  if (layer == "(client)") {
    t = text
    while (match(t, /(mgen__|MGEN__)[A-Za-z0-9_]*/)) {
      name = substr(t, RSTART, RLENGTH)
      t = substr(t, RSTART + RLENGTH)
      if (!(name in listed)) {
        listed[name] = mentions(names, name)
        if (!listed[name]) report(FILENAME, FNR, "uses " name ", which " internal " does not list")
      }
    }
  }
  t = text
  while (match(t, /[A-Za-z_][A-Za-z0-9_]*/)) {
    name = substr(t, RSTART, RLENGTH)
    t = substr(t, RSTART + RLENGTH)
    if (!(name in def) || def[name] == FILENAME || name in dup) continue
    if (layer == "(client)") {
      if (is_code && dir_of(FILENAME) == tools && dir_of(def[name]) == tools)
        uses[FILENAME SUBSEP def[name]] = FNR ": " name
      continue
    }
    target = layer_of(def[name])
    if (rank_of(target) > rank_of(layer))
      report(FILENAME, FNR, "calls " name ", defined in " def[name] ":" def_line[name] " (" target \
             " is above " layer " in LAYERS)")
  }
}

function check_include(inc,    first, target, path) {
  first = inc ~ /\// ? substr(inc, 1, index(inc, "/") - 1) : ""
  if (layer == "(client)") {
    if (inc == internal || first == "mgen") return
    if (first != "" && exists(src "/" inc))
      report(FILENAME, FNR, "includes \"" inc "\" (runtime/src): bench/ and tools/ include the public " \
             "headers and " internal " only")
    return
  }
  if (inc == internal) target = "(src)"
  else if (first != "" && (first in rank) && exists(src "/" inc)) target = first
  else if (exists(dir_of(FILENAME) "/" inc)) target = layer
  else return # a public or generated header
  if (target != layer) arrows[layer " -> " target] = 1
  if (rank_of(target) > rank_of(layer))
    report(FILENAME, FNR, "includes \"" inc "\": " target " is above " layer " in LAYERS")
}

# A cycle among the files of runtime/tools, found by depth-first search.
function visit(f,    key, g, parts) {
  state[f] = 1
  stack[++depth] = f
  for (key in uses) {
    split(key, parts, SUBSEP)
    if (parts[1] != f) continue
    g = parts[2]
    if (state[g] == 1) { cycle(g); continue }
    if (!state[g]) visit(g)
  }
  depth--
  state[f] = 2
}

function cycle(g,    i, from, to, text) {
  for (i = depth; i >= 1 && stack[i] != g; i--) ;
  text = ""
  for (; i <= depth; i++) {
    from = stack[i]
    to = i < depth ? stack[i + 1] : g
    text = text (text == "" ? "" : ", ") from ":" uses[from SUBSEP to] " -> " to
  }
  print "cycle: " text
  bad++
}

END {
  for (key in uses) { split(key, p, SUBSEP); files[p[1]] = 1 }
  for (f in files) if (!state[f]) visit(f)
  n = 0
  for (a in arrows) n++
  print "arrows " n
  exit 0
}
