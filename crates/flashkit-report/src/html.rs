//! A self-contained HTML report: inline CSS, inline SVG figures, sortable tables (a few lines
//! of inline script; clicking a header sorts by that column, numerically when it can). No
//! external resource is referenced, so the page opens offline and can be mailed as one file.

use crate::Table;

/// One block of a report.
#[derive(Clone, Debug, PartialEq)]
pub enum Block {
    /// A paragraph of plain text.
    Paragraph(String),
    /// A figure: caption and SVG document.
    Figure {
        /// Caption.
        caption: String,
        /// The SVG document, inlined as is.
        svg: String,
        /// An anchor other blocks can link to (`#id`), if any.
        id: Option<String>,
    },
    /// A bulleted list, each item text and an optional link within the page.
    Items(Vec<Item>),
    /// A sortable table.
    Table(Table),
    /// Text shown as it is, in a fixed-width font (a command's printed tables), folded
    /// under `summary` (`<details>`) so that a long output does not bury the figures.
    Preformatted {
        /// The line that stays visible, clicked to open the text.
        summary: String,
        /// The text.
        text: String,
    },
}

/// One item of a [`Block::Items`] list.
#[derive(Clone, Debug, PartialEq)]
pub struct Item {
    /// The text.
    pub text: String,
    /// A link after the text: its label, and the id of the block it goes to.
    pub link: Option<(String, String)>,
}

/// A titled section.
#[derive(Clone, Debug, PartialEq)]
pub struct Section {
    /// Heading.
    pub heading: String,
    /// Content.
    pub blocks: Vec<Block>,
}

/// A whole report.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct HtmlReport {
    /// Page title and top heading.
    pub title: String,
    /// Paragraphs under the title.
    pub intro: Vec<String>,
    /// Sections.
    pub sections: Vec<Section>,
}

const STYLE: &str = "body{font-family:sans-serif;max-width:1200px;margin:2em auto;padding:0 1em;color:#222}\
h1{font-size:1.6em}h2{font-size:1.25em;margin-top:2em;border-bottom:1px solid #ccc}\
figure{margin:1.5em 0}figcaption{font-size:.9em;color:#555}\
table{border-collapse:collapse;font-size:.85em}th,td{border:1px solid #ccc;padding:.25em .5em}\
th{background:#f0f0f0;cursor:pointer;position:sticky;top:0}td.n{text-align:right;font-variant-numeric:tabular-nums}\
.scroll{max-height:36em;overflow:auto}pre{font-size:.8em;overflow-x:auto;background:#f8f8f8;padding:.5em}\
summary{cursor:pointer;color:#333}";

const SCRIPT: &str = "document.querySelectorAll('table.sortable').forEach(function(t){\
t.querySelectorAll('th').forEach(function(th,i){var asc=true;th.addEventListener('click',function(){\
var rows=Array.from(t.tBodies[0].rows);rows.sort(function(a,b){var x=a.cells[i].textContent,y=b.cells[i].textContent;\
var p=parseFloat(x),q=parseFloat(y);var r=(!isNaN(p)&&!isNaN(q))?p-q:x.localeCompare(y);return asc?r:-r;});\
asc=!asc;rows.forEach(function(r){t.tBodies[0].appendChild(r);});});});});";

/// Escape text for HTML.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            _ => out.push(c),
        }
    }
    out
}

fn looks_numeric(cell: &str) -> bool {
    !cell.is_empty() && cell.parse::<f64>().is_ok()
}

fn table_html(table: &Table) -> String {
    let mut html = String::from("<div class=\"scroll\"><table class=\"sortable\"><thead><tr>");
    for h in &table.header {
        html.push_str(&format!("<th>{}</th>", escape(h)));
    }
    html.push_str("</tr></thead><tbody>");
    for row in &table.rows {
        html.push_str("<tr>");
        for cell in row {
            let class = if looks_numeric(cell) {
                " class=\"n\""
            } else {
                ""
            };
            html.push_str(&format!("<td{class}>{}</td>", escape(cell)));
        }
        html.push_str("</tr>");
    }
    html.push_str("</tbody></table></div>");
    html
}

impl HtmlReport {
    /// The page.
    pub fn render(&self) -> String {
        let mut html = format!(
            "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{}</title><style>{STYLE}</style></head><body>\n<h1>{}</h1>\n",
            escape(&self.title),
            escape(&self.title)
        );
        for p in &self.intro {
            html.push_str(&format!("<p>{}</p>\n", escape(p)));
        }
        for section in &self.sections {
            html.push_str(&format!("<h2>{}</h2>\n", escape(&section.heading)));
            for block in &section.blocks {
                match block {
                    Block::Paragraph(text) => html.push_str(&format!("<p>{}</p>\n", escape(text))),
                    Block::Figure { caption, svg, id } => {
                        let id = id
                            .as_ref()
                            .map_or(String::new(), |id| format!(" id=\"{}\"", escape(id)));
                        html.push_str(&format!(
                            "<figure{id}>{svg}<figcaption>{}</figcaption></figure>\n",
                            escape(caption)
                        ));
                    }
                    Block::Items(items) => {
                        html.push_str("<ul>");
                        for item in items {
                            html.push_str(&format!("<li>{}", escape(&item.text)));
                            if let Some((label, target)) = &item.link {
                                html.push_str(&format!(
                                    " <a href=\"#{}\">{}</a>",
                                    escape(target),
                                    escape(label)
                                ));
                            }
                            html.push_str("</li>");
                        }
                        html.push_str("</ul>\n");
                    }
                    Block::Table(table) => {
                        html.push_str(&table_html(table));
                        html.push('\n');
                    }
                    Block::Preformatted { summary, text } => html.push_str(&format!(
                        "<details><summary>{}</summary><pre>{}</pre></details>\n",
                        escape(summary),
                        escape(text)
                    )),
                }
            }
        }
        html.push_str(&format!("<script>{SCRIPT}</script>\n</body></html>\n"));
        html
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_page_is_self_contained_and_escaped() {
        let mut table = Table::new(["run", "erases"]);
        table.push(["page/<greedy>", "12"]);
        let report = HtmlReport {
            title: "Sweep & results".into(),
            intro: vec!["2 runs".into()],
            sections: vec![Section {
                heading: "Runs".into(),
                blocks: vec![
                    Block::Table(table),
                    Block::Figure {
                        caption: "a figure".into(),
                        svg: "<svg xmlns=\"http://www.w3.org/2000/svg\"/>".into(),
                        id: None,
                    },
                    Block::Preformatted {
                        summary: "output".into(),
                        text: "a  <b>\n1  2".into(),
                    },
                ],
            }],
        };
        let html = report.render();
        assert!(html.contains("<title>Sweep &amp; results</title>"));
        assert!(html.contains("page/&lt;greedy&gt;"));
        assert!(html.contains("<td class=\"n\">12</td>"));
        assert!(html.contains("<svg xmlns"));
        assert!(html.contains("<pre>a  &lt;b&gt;\n1  2</pre>"));
        assert!(!html.contains("<ul>"), "no list, no list markup");
        for external in ["http://", "https://", "src=", "href="] {
            let outside_svg_namespace = html.replace("xmlns=\"http://www.w3.org/2000/svg\"", "");
            assert!(
                !outside_svg_namespace.contains(external),
                "{external} would need the network"
            );
        }
    }

    #[test]
    fn every_markup_character_is_escaped_and_only_numbers_align_right() {
        assert_eq!(escape("a&b<c>d\"e'f"), "a&amp;b&lt;c&gt;d&quot;e'f");
        let mut table = Table::new(["name", "value"]);
        table.push(["page/greedy", "-1.5e3"]);
        table.push(["12 runs", ""]);
        assert_eq!(
            table_html(&table),
            "<div class=\"scroll\"><table class=\"sortable\"><thead><tr><th>name</th><th>value</th></tr></thead><tbody>\
             <tr><td>page/greedy</td><td class=\"n\">-1.5e3</td></tr><tr><td>12 runs</td><td></td></tr>\
             </tbody></table></div>"
        );
    }

    #[test]
    fn items_link_to_figures_within_the_page() {
        let report = HtmlReport {
            title: "t".into(),
            intro: Vec::new(),
            sections: vec![Section {
                heading: "h".into(),
                blocks: vec![
                    Block::Items(vec![
                        Item {
                            text: "holds: a < b".into(),
                            link: Some(("Fig. 10".into(), "fast-fig10".into())),
                        },
                        Item {
                            text: "plain".into(),
                            link: None,
                        },
                    ]),
                    Block::Figure {
                        caption: "c".into(),
                        svg: "<svg/>".into(),
                        id: Some("fast-fig10".into()),
                    },
                ],
            }],
        };
        let html = report.render();
        assert!(html.contains(
            "<ul><li>holds: a &lt; b <a href=\"#fast-fig10\">Fig. 10</a></li><li>plain</li></ul>"
        ));
        assert!(html.contains("<figure id=\"fast-fig10\"><svg/>"));
    }
}
