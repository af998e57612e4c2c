// toolwire-inspect's exported page. Every string in the data was recorded from the wire: it reaches
// the page through textContent only, never as markup, and the page fetches nothing.
"use strict";
(function () {
  const data = JSON.parse(document.getElementById("toolwire-data").textContent);
  const flows = data.flows;
  // Every line and finding text is an index into the page's one table of strings: read when shown.
  const strings = data.strings;
  const text = (index) => strings[index];
  const texts = (indexes) => indexes.map(text);
  const byId = new Map(flows.map((flow) => [flow.id, flow]));
  let selected = null;
  let tab = "flow";

  function el(tag, props, ...children) {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(props || {})) {
      if (key === "class") node.className = value;
      else if (key === "text") node.textContent = value;
      else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
      else node.setAttribute(key, value);
    }
    for (const child of children) if (child !== null && child !== undefined) node.append(child);
    return node;
  }

  function status(flow) {
    if (flow.status !== null) return String(flow.status);
    return flow.state === "error" ? "error" : "—";
  }

  function ms(value) {
    if (value === null || value === undefined) return "…";
    if (value < 1000) return value >= 10 ? value.toFixed(0) + "ms" : value.toFixed(1) + "ms";
    return (value / 1000).toFixed(2) + "s";
  }

  // -- filters: over the facts the exporter computed for each flow --------------------------------

  const facts = new Map(flows.map((flow) => [flow.id, [
    flow.method, flow.path, flow.host, flow.route, flow.dialect, flow.model, status(flow),
    flow.state, flow.mode, flow.error, flow.rules.join(" "), flow.tool_names.join(" "),
  ].join("\n").toLowerCase()]));
  const payloads = new Map();  // flow id -> its panes' text, lower-cased once, when first searched

  function payloadText(flow) {
    let found = payloads.get(flow.id);
    if (found === undefined) {
      found = Object.values(flow.panes).map((pane) => texts(pane.lines).join("\n")).join("\n").toLowerCase();
      payloads.set(flow.id, found);
    }
    return found;
  }

  const STATUS = {
    "": () => true,
    "2xx": (f) => f.status !== null && f.status >= 200 && f.status < 300,
    "4xx": (f) => f.status !== null && f.status >= 400 && f.status < 500,
    "5xx": (f) => f.status !== null && f.status >= 500,
    "failed": (f) => f.state === "error" || (f.status !== null && f.status >= 400),
    "none": (f) => f.status === null,
  };

  function options(values) {
    return [["", "any"], ...[...new Set(values)].sort().map((value) => [value, value])];
  }

  function select(id, label, choices) {
    const node = el("select", {id: id, "aria-label": label});
    for (const [value, text] of choices) node.append(el("option", {value: value, text: text}));
    node.addEventListener("change", applyFilters);
    return el("label", {}, label + " ", node);
  }

  function checkbox(id, label) {
    const node = el("input", {type: "checkbox", id: id});
    node.addEventListener("change", applyFilters);
    return el("label", {}, node, " " + label);
  }

  const search = el("input", {type: "search", id: "filter-text", placeholder: "filter: text, #id, rule id, tool…",
                              "aria-label": "filter text"});
  search.addEventListener("input", applyFilters);
  const count = el("span", {id: "shown-count"});
  const filters = el("div", {id: "filters"},
    search,
    checkbox("filter-payloads", "in payloads"),
    select("filter-dialect", "dialect", options(flows.map((f) => f.dialect).filter(Boolean))),
    select("filter-status", "status", [["", "any"], ["2xx", "2xx"], ["4xx", "4xx"], ["5xx", "5xx"],
                                       ["failed", "failed (error or ≥ 400)"], ["none", "no response"]]),
    select("filter-rule", "rule", options(flows.flatMap((f) => f.rules))),
    select("filter-tool", "tool", options(flows.flatMap((f) => f.tool_names))),
    checkbox("filter-errors", "with errors"),
    checkbox("filter-warnings", "with warnings"),
    select("filter-replay", "replays", [["", "any"], ["only", "only replays"], ["hide", "no replays"]]),
    count);

  function matches(flow) {
    const value = (id) => document.getElementById(id).value;
    const checked = (id) => document.getElementById(id).checked;
    const words = search.value.toLowerCase().split(/\s+/).filter(Boolean);
    for (const word of words) {
      const id = /^#(\d+)$/.exec(word);
      if (id) {  // as in the filter grammar: flow N and its replays
        if (flow.id !== Number(id[1]) && flow.replay_of !== Number(id[1])) return false;
      } else if (!facts.get(flow.id).includes(word) &&
                 !(checked("filter-payloads") && payloadText(flow).includes(word))) {
        return false;
      }
    }
    if (value("filter-dialect") && flow.dialect !== value("filter-dialect")) return false;
    if (!STATUS[value("filter-status")](flow)) return false;
    if (value("filter-rule") && !flow.rules.includes(value("filter-rule"))) return false;
    if (value("filter-tool") && !flow.tool_names.includes(value("filter-tool"))) return false;
    if (checked("filter-errors") && flow.errors === 0) return false;
    if (checked("filter-warnings") && flow.warnings === 0) return false;
    if (value("filter-replay") === "only" && flow.replay_of === null) return false;
    if (value("filter-replay") === "hide" && flow.replay_of !== null) return false;
    return true;
  }

  // -- the list ------------------------------------------------------------------------------------

  const COLUMNS = ["#", "time", "method", "path", "dialect", "model", "status", "latency", "tools", "calls",
                   "findings"];
  // Rows are grid boxes, not table rows: with content-visibility the browser lays out only the rows
  // in view, so a thousand flows open as fast as ten.
  const rows = new Map();
  const body = el("div", {class: "rows", role: "rowgroup"});
  const cell = (text, cls) => el("span", {role: "cell", class: cls || "", text: text});
  for (const flow of flows) {
    const badge = flow.errors ? "✖ " + flow.errors : flow.warnings ? "▲ " + flow.warnings : "";
    const row = el("div", {role: "row", "data-flow": String(flow.id), class: "row" + (flow.errors ? " has-errors" :
                           flow.warnings ? " has-warnings" : ""), onclick: () => choose(flow.id)},
      cell(String(flow.id) + (flow.replay_of !== null ? " ↻" + flow.replay_of : "")),
      cell(flow.started.slice(11, 19)),
      cell(flow.method),
      cell(flow.path, "path"),
      cell(flow.dialect),
      cell(flow.model),
      cell(status(flow), "status"),
      cell(ms(flow.latency_ms)),
      cell(String(flow.tools)),
      cell(String(flow.tool_calls)),
      cell(badge, "badge"));
    rows.set(flow.id, row);
    body.append(row);
  }
  const list = el("div", {id: "flow-list", role: "table"},
    el("div", {class: "row head", role: "row"}, ...COLUMNS.map((name) => el("span", {role: "columnheader", text: name}))),
    body);

  function applyFilters() {
    let shown = 0;
    for (const flow of flows) {
      const visible = matches(flow);
      rows.get(flow.id).hidden = !visible;
      if (visible) shown += 1;
    }
    count.textContent = shown + " of " + flows.length + " flows";
  }

  // -- one flow ------------------------------------------------------------------------------------

  const detail = el("section", {id: "detail"}, el("p", {class: "hint", text: "Choose a flow in the list."}));

  function lineList(lines, marks, inline) {
    const marked = new Map(marks);
    const out = el("ol", {class: "lines"});
    lines.forEach((line, index) => {
      const mark = marked.get(index);
      out.append(el("li", {class: mark ? "mark-" + mark : "", "data-line": String(index)},
        el("span", {class: "ln", text: String(index + 1)}), el("span", {class: "text", text: line})));
      for (const finding of (inline && inline.get(index)) || []) {
        out.append(el("li", {class: "inline-finding sev-" + finding.severity},
          el("span", {class: "ln"}), el("span", {class: "text",
            text: "▲ " + finding.rule + " " + finding.severity + " · " + text(finding.message)})));
      }
    });
    return out;
  }

  function flowTab(flow) {
    const panes = el("div", {class: "panes"});
    for (const [name, pane] of Object.entries(flow.panes)) {
      const inline = new Map();
      for (const finding of flow.findings) {
        const line = finding.lines[name];
        if (line === undefined) continue;
        if (!inline.has(line)) inline.set(line, []);
        inline.get(line).push(finding);
      }
      panes.append(el("section", {class: "pane", "data-pane": name},
        el("h3", {text: pane.title}), pane.note ? el("p", {class: "note", text: pane.note}) : null,
        lineList(texts(pane.lines), pane.marks, inline)));
    }
    const findings = el("table", {class: "findings"},
      el("thead", {}, el("tr", {}, ...["severity", "rule", "effect", "where", "what"]
        .map((name) => el("th", {text: name})))));
    const rowsOf = el("tbody");
    for (const finding of flow.findings) {
      rowsOf.append(el("tr", {class: "sev-" + finding.severity, onclick: () => reveal(finding)},
        el("td", {text: finding.severity}), el("td", {class: "rule", text: finding.rule}),
        el("td", {text: finding.effect}), el("td", {text: finding.where}),
        el("td", {},
          el("div", {class: "pointer", text: finding.pointer || "/"}),
          el("div", {class: "message", text: text(finding.message)}),
          text(finding.why) ? el("div", {class: "why", text: "why: " + text(finding.why)}) : null,
          text(finding.hint) ? el("div", {class: "fix", text: "fix: " + text(finding.hint)}) : null)));
    }
    findings.append(rowsOf);
    return el("div", {},
      flow.findings.length ? findings : el("p", {class: "hint", text: "No findings."}), panes);
  }

  function reveal(finding) {
    for (const [pane, line] of Object.entries(finding.lines)) {
      const node = detail.querySelector(`section[data-pane="${pane}"] li[data-line="${line}"]`);
      if (node === null) continue;
      node.classList.add("flash");
      node.scrollIntoView({block: "center"});
      return;
    }
  }

  function conversationTab(flow) {
    const conversation = flow.conversation;
    return el("div", {class: "conversation"}, el("h3", {text: conversation.title}),
      lineList(texts(conversation.turns.lines), conversation.turns.marks),
      el("h3", {text: "Tools"}), lineList(texts(conversation.tools.lines), conversation.tools.marks));
  }

  function diffsTab(flow) {
    if (!flow.diffs.length) return el("p", {class: "hint", text: "Nothing to compare for this flow."});
    return el("div", {}, ...flow.diffs.map((diff) => el("section", {class: "diff", "data-diff": diff.name},
      el("h3", {text: diff.title}), el("p", {class: "note", text: diff.summary}),
      lineList(texts(diff.rows.lines), diff.rows.marks),
      diff.notes ? el("h4", {text: "notes"}) : null,
      diff.notes ? lineList(texts(diff.notes.lines), diff.notes.marks) : null)));
  }

  function plainTab(lines, empty) {
    return lines.length ? lineList(texts(lines), []) : el("p", {class: "hint", text: empty});
  }

  const TABS = [
    ["flow", "Request / response", flowTab],
    ["conversation", "Conversation", conversationTab],
    ["diffs", "Diffs", diffsTab],
    ["headers", "Headers", (flow) => plainTab(flow.headers, "No headers.")],
    ["chunks", "Chunks", (flow) => plainTab(flow.chunks, "Not streamed.")],
  ];

  function render() {
    const flow = byId.get(selected);
    if (flow === undefined) return;
    const bar = el("nav", {class: "tabs"}, ...TABS.map(([name, label]) => el("button", {
      type: "button", "data-tab": name, class: name === tab ? "active" : "",
      onclick: () => { tab = name; render(); },
    }, label + (name === "diffs" && flow.diffs.length ? " (" + flow.diffs.length + ")" : ""))));
    const heading = el("h2", {id: "flow-title",
      text: "#" + flow.id + " " + flow.method + " " + flow.path + " · " + status(flow) + " · " +
            (flow.dialect || "unknown dialect") + (flow.model ? " · " + flow.model : "") +
            (flow.replay_of !== null ? " · replay of #" + flow.replay_of : "")});
    const error = flow.error ? el("p", {class: "error", text: flow.error}) : null;
    const [, , build] = TABS.find(([name]) => name === tab);
    const parts = [heading, error, bar, el("div", {id: "tab-" + tab, class: "tab"}, build(flow))];
    detail.replaceChildren(...parts.filter((part) => part !== null));
  }

  function choose(id) {
    if (!byId.has(id)) return;
    if (selected !== null) rows.get(selected).classList.remove("selected");
    selected = id;
    rows.get(id).classList.add("selected");
    if (location.hash !== "#flow-" + id) history.replaceState(null, "", "#flow-" + id);
    render();
  }

  function visibleRows() {
    return flows.filter((flow) => !rows.get(flow.id).hidden).map((flow) => flow.id);
  }

  document.addEventListener("keydown", (event) => {
    if (event.target instanceof HTMLInputElement || event.target instanceof HTMLSelectElement) return;
    const ids = visibleRows();
    if (!ids.length) return;
    const at = ids.indexOf(selected);
    if (event.key === "j") choose(ids[Math.min(at + 1, ids.length - 1)]);
    else if (event.key === "k") choose(ids[Math.max(at - 1, 0)]);
    else return;
    rows.get(selected).scrollIntoView({block: "nearest"});
  });

  const errors = flows.reduce((sum, flow) => sum + flow.errors, 0);
  document.body.append(
    el("header", {}, el("h1", {text: data.title}),
      el("span", {class: "summary", text: flows.length + " flows · " + errors + " errors · exported by toolwire-inspect"})),
    filters,
    el("main", {}, el("div", {id: "list-pane"}, list), detail));
  applyFilters();
  const wanted = /^#flow-(\d+)$/.exec(location.hash);
  if (wanted) choose(Number(wanted[1]));
})();
