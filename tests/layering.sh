#!/bin/bash
# The layering of the parts (docs/architecture.md), checked on the built tree:
#  1. every #include "dir/file" of a part names the part itself or a part below it
#     (the build already fails on any other: this says which line, readably);
#  2. the folder include graph has no cycle;
#  3. every symbol a part's library leaves undefined and another part defines is defined
#     by a part below it (nm of the per-part static libraries). With 2, this means no
#     chain of calls between files leaves a folder and comes back: no file-level call
#     cycle across folders. (A program links the parts in this order, one pass: a call
#     upward would already fail to link from the part's own unit tests.)
#  4. no symbol is defined by two parts;
#  5. every folder with C sources (but tests/ and bench/) is a part;
#  6. no include steps around the roots by a relative path ("../daemon/x.h").
# Usage: layering.sh BUILD/layers/parts.txt SOURCE_DIR
# parts.txt (cmake/parts.cmake): FOLDER <tab> LIBRARY|- <tab> parts below, space-separated
set -u
parts_txt=$1
src=$2
fail=0
declare -A below lib
parts=()
while IFS=$'\t' read -r folder file deps; do
	parts+=("$folder")
	below[$folder]=" $deps "
	lib[$folder]=$file
done <"$parts_txt"
[ ${#parts[@]} -gt 0 ] || { echo "no parts in $parts_txt"; exit 1; }

below_list=$(for folder in "${parts[@]}"; do echo "$folder:${below[$folder]}"; done)
# awk reads the parts table from this: "FOLDER: below below ..." a line
awk_parts='BEGIN { n = split(bl, rows, "\n")
	for (i = 1; i <= n; i++) {
		k = rows[i]; sub(/:.*/, "", k); b = rows[i]; sub(/^[^:]*:/, "", b)
		below[k] = b; part[k] = 1 } }'

# 5: every folder with C sources (but tests/ and bench/, which link parts) is a part,
# else its files are built into nothing.
while read -r dir; do
	case " ${parts[*]} " in
	*" $dir "*) ;;
	*) echo "FAIL $dir/ holds .c files but is no part (add a sg_part line)"; fail=1 ;;
	esac
done < <(cd "$src" && find . \( -name build -o -name 'build*' -o -name .git -o -name tests \
	-o -name bench \) -prune -o -name '*.c' -printf '%h\n' | sed 's#^\./##' | sort -u)

# 1 and 2: includes (one grep over every part's files, one awk)
edges=$(mktemp)
trap 'rm -f "$edges" "$edges.def" "$edges.und"' EXIT
shopt -s nullglob
files=()
for folder in "${parts[@]}"; do files+=("$src/$folder"/*.[ch]); done
shopt -u nullglob
n_inc=$(grep -H -n -E '^[[:space:]]*#[[:space:]]*include[[:space:]]*"[^"]*/[^"/]*"' "${files[@]}" |
	awk -v bl="$below_list" -v src="$src/" -v edges="$edges" "$awk_parts"'
	{	# "SRC/FOLDER/file.c:LINE:#include "DIR/x.h""
		f = $0; sub(/:[0-9]+:.*/, "", f); rel = substr(f, length(src) + 1)
		folder = rel; sub(/\/[^\/]*$/, "", folder)
		line = $0; sub(/^[^:]*:/, "", line); sub(/:.*/, "", line)
		dir = $0; sub(/^[^"]*"/, "", dir); sub(/\/[^\/]*"[^"]*$/, "", dir)
		n++
		if (dir ~ /^\.\.?(\/|$)/ || dir ~ /\/\.\.(\/|$)/) {
			printf "FAIL %s:%s includes %s/: a relative path steps around the layers\n",
			       rel, line, dir > "/dev/stderr"
			bad = 1
			next
		}
		if (dir == folder || !(dir in part))
			next      # its own folder, or not a part (a generated header)
		print folder, dir > edges
		if (index(below[folder], " " dir " ") == 0) {
			printf "FAIL %s:%s includes %s/: not below %s (below it:%s)\n",
			       rel, line, dir, folder, below[folder] > "/dev/stderr"
			bad = 1
		}
	}
	END { print n + 0; exit bad }') || fail=1
if ! sort -u "$edges" | tsort >/dev/null 2>"$edges.def"; then
	echo "FAIL the folder include graph has a cycle:"
	sed 's/^/  /' "$edges.def"
	fail=1
fi
echo "folder include graph (part: parts it includes):"
sort -u "$edges" | awk -v order="${parts[*]}" '
	{ to[$1] = to[$1] " " $2 }
	END { n = split(order, p, " "); for (i = 1; i <= n; i++) printf "  %-12s%s\n", p[i] ":", to[p[i]] }'

# 3 and 4: symbols. Defined (global, any section) and undefined symbols of each library.
: >"$edges.def"
: >"$edges.und"
for folder in "${parts[@]}"; do
	l=${lib[$folder]}
	[ "$l" = "-" ] && continue
	if [ ! -f "$l" ]; then
		echo "FAIL $folder: library $l not built"
		fail=1
		continue
	fi
	nm -A -g "$l" 2>/dev/null | awk -v p="$folder" -v d="$edges.def" -v u="$edges.und" '
		# "LIB:OBJ:ADDR T sym" or "LIB:OBJ:        U sym"
		{ sym = $NF; t = $(NF - 1); n = split($1, f, ":"); obj = f[n - 1] }
		t == "U" { print p, obj, sym >> u; next }
		t ~ /^[A-TV-Z]$/ { print p, obj, sym >> d }'
done
dups=$(awk '{ if (($3 in at) && at[$3] != $1) print $3 " in " at[$3] " and " $1; at[$3] = $1 }' \
	"$edges.def")
if [ -n "$dups" ]; then
	echo "FAIL symbols defined by two parts:"
	echo "$dups" | sed 's/^/  /'
	fail=1
fi
upward=$(awk -v bl="$below_list" "$awk_parts"'
	FNR == NR { def[$3] = $1; next }
	($3 in def) && def[$3] != $1 && index(below[$1], " " def[$3] " ") == 0 {
		print $1 "/" $2 " calls " $3 ", defined in " def[$3] " (not below " $1 ")" }' \
	"$edges.def" "$edges.und")
if [ -n "$upward" ]; then
	echo "FAIL calls outside a part's layers:"
	echo "$upward" | sed 's/^/  /'
	fail=1
fi
n_def=$(wc -l <"$edges.def")
n_und=$(wc -l <"$edges.und")
echo "${#parts[@]} parts, $n_inc includes, $n_def symbols defined, $n_und references checked"
[ $fail -eq 0 ] && echo "layering holds" || echo "layering broken"
exit $fail
