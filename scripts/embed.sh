#!/bin/sh
# Makes a C file of src/report/page.html (the HTML report's page): the
# text before its line <!--cpuledger:data--> as html_page_head, the text
# after it as html_page_body (the report's data goes between).
set -eu
awk 'BEGIN { print "/* made by scripts/embed.sh from src/report/page.html */"
	     print "const char html_page_head[] =" }
     /^<!--cpuledger:data-->$/ { print "\"\";\nconst char html_page_body[] ="; next }
     { gsub(/\\/, "\\\\"); gsub(/"/, "\\\""); printf "\"%s\\n\"\n", $0 }
     END { print "\"\";" }' "$1"
