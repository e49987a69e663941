/* The HTML report's page (src/report/page.html, made into C by
 * scripts/embed.sh): what comes before the report's data, and after. */
#ifndef CPULEDGER_REPORT_HTML_PAGE_H
#define CPULEDGER_REPORT_HTML_PAGE_H

extern const char html_page_head[];
extern const char html_page_body[];

#endif
