// PushRelay admin console. Plain JavaScript, no libraries: the charts are SVG drawn below.
// The admin token lives in sessionStorage only (this tab) and goes out as `Authorization: Bearer` to ./v1/…
"use strict";

(function () {
  const TOKEN_KEY = "pushrelay.adminToken";
  const SVG = "http://www.w3.org/2000/svg";
  const SERIES = {
    accepted: { label: "Accepted", color: "#16a34a" },
    rejectedByQuota: { label: "Rejected by quota", color: "#d97706" },
    failed: { label: "Failed", color: "#dc2626" },
  };
  const VIEWS = ["overview", "quotas", "dead-tokens", "matrix", "providers"];
  const state = { quotas: [], quotaDay: "", currentView: "overview" };

  const $ = (id) => document.getElementById(id);

  function el(tag, attrs, children) {
    const node = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (k === "text") node.textContent = v;
      else if (k === "className") node.className = v;
      else node.setAttribute(k, v);
    }
    for (const c of children || []) node.append(c);
    return node;
  }

  function svg(tag, attrs, text) {
    const node = document.createElementNS(SVG, tag);
    for (const [k, v] of Object.entries(attrs || {})) node.setAttribute(k, String(v));
    if (text !== undefined) node.textContent = text;
    return node;
  }

  // `abcdef…uvwxyz`, as the server shortens tokens in its logs and CLI.
  function shortToken(t) {
    if (t.length <= 16) return t.slice(0, 4) + "…";
    return t.slice(0, 6) + "…" + t.slice(-6);
  }

  function fmt(n) {
    return Number(n).toLocaleString("en-US");
  }

  // The top of a chart's axis: four equal whole-number steps of 1, 2 or 5 × 10^k.
  function niceMax(v) {
    const rough = Math.max(1, v) / 4;
    const p = Math.pow(10, Math.floor(Math.log10(rough)));
    for (const m of [1, 2, 5, 10]) if (m * p >= rough) return 4 * Math.max(1, Math.round(m * p));
    return 40 * p;
  }

  // ---- API -------------------------------------------------------------------------------------------------------

  class Unauthorized extends Error {}

  async function api(method, path, body) {
    const token = sessionStorage.getItem(TOKEN_KEY);
    if (!token) throw new Unauthorized("Sign in with the admin token.");
    const init = { method, headers: { Authorization: "Bearer " + token, Accept: "application/json" }, cache: "no-store" };
    if (body !== undefined) {
      init.headers["Content-Type"] = "application/json";
      init.body = JSON.stringify(body);
    }
    const response = await fetch(path, init);
    let json = null;
    try {
      json = await response.json();
    } catch (_) {
      json = null;
    }
    if (response.status === 401) throw new Unauthorized((json && json.message) || "The admin token is wrong.");
    if (response.status === 429) throw new Unauthorized((json && json.message) || "Too many failed attempts; wait a minute.");
    if (!response.ok) throw new Error((json && json.message) || "The server answered " + response.status + ".");
    return json;
  }

  // ---- session ---------------------------------------------------------------------------------------------------

  function clearData() {
    for (const id of ["cards", "chart-hours", "chart-days", "chart-providers", "legend-hours", "legend-days", "matrix-cards"]) $(id).replaceChildren();
    for (const id of ["quota-table", "dead-table", "matrix-table", "latency-table", "providers-table"]) $(id).tBodies[0].replaceChildren();
    $("latency").hidden = true;
    for (const id of ["overview-day", "overview-note", "quota-note", "dead-note", "matrix-note", "providers-note", "status"]) $(id).textContent = "";
    state.quotas = [];
  }

  function showLogin(message) {
    sessionStorage.removeItem(TOKEN_KEY);
    clearData();
    $("app").hidden = true;
    $("nav").hidden = true;
    $("sign-out").hidden = true;
    $("login").hidden = false;
    $("login-message").textContent = message || "";
    $("token").value = "";
    $("token").focus();
  }

  function showApp() {
    $("login").hidden = true;
    $("login-message").textContent = "";
    $("app").hidden = false;
    $("nav").hidden = false;
    $("sign-out").hidden = false;
  }

  function setStatus(text, kind) {
    const s = $("status");
    s.textContent = text;
    s.className = "status" + (kind ? " " + kind : "");
  }

  async function guarded(work) {
    try {
      await work();
    } catch (e) {
      if (e instanceof Unauthorized) showLogin(e.message);
      else setStatus(e.message, "error");
    }
  }

  // ---- views -----------------------------------------------------------------------------------------------------

  function currentViewFromHash() {
    const name = location.hash.replace(/^#/, "");
    return VIEWS.includes(name) ? name : "overview";
  }

  async function showView(name) {
    if (state.currentView !== name) setStatus("");
    state.currentView = name;
    for (const section of document.querySelectorAll(".view")) section.hidden = section.dataset.view !== name;
    for (const a of document.querySelectorAll("#nav a")) a.classList.toggle("active", a.dataset.view === name);
    await loadView(name);
  }

  async function loadView(name) {
    await guarded(async () => {
      if (name === "overview") await loadOverview();
      else if (name === "quotas") await loadQuotas();
      else if (name === "dead-tokens") await loadDeadTokens();
      else if (name === "matrix") await loadMatrix();
      else if (name === "providers") await loadProviders();
      document.body.dataset.loaded = name;
    });
  }

  // Overview ---------------------------------------------------------------------------------------------------------

  function card(label, value, kind, id) {
    const attrs = { className: "card" + (kind ? " " + kind : "") };
    if (id) attrs["data-card"] = id;
    return el("div", attrs, [el("div", { className: "value", text: value }), el("div", { className: "label", text: label })]);
  }

  async function loadOverview() {
    const stats = await api("GET", "v1/stats?days=30");
    const t = stats.todayTotals;
    const kinds = stats.kinds || {};
    const cards = [
      card("Accepted today", fmt(t.accepted), "accepted", "accepted"),
      card("Rejected by quota today", fmt(t.rejectedByQuota), "rejected", "rejectedByQuota"),
      card("Failed today", fmt(t.failed), "failed", "failed"),
      card("Tokens today", fmt(t.tokens), "", "tokens"),
    ];
    if (stats.channels) cards.push(card("Live push channels", fmt(stats.channels.subscriptions), "", "channels"));
    if (stats.matrixQueue) cards.push(card("Matrix retry queue", fmt(stats.matrixQueue.queued), "", "matrixQueue"));
    cards.push(card("WebPush relayed today", fmt(kinds.webpush_relay || 0), "", "webpushRelay"));
    cards.push(card("Call invites today", fmt(kinds.call_invite || 0), "", "callInvite"));
    $("cards").replaceChildren(...cards);
    $("overview-day").textContent = "UTC day " + stats.today + " · updated " + stats.generatedAt.slice(11, 19) + " UTC";

    const hours = stats.hours.map((h) => ({ key: String(h.hour), label: String(h.hour).padStart(2, "0"), values: { accepted: h.accepted, failed: h.failed } }));
    drawBars($("chart-hours"), "hours", hours, ["accepted", "failed"], 3);
    legend($("legend-hours"), ["accepted", "failed"]);

    const days = stats.days.map((d) => ({ key: d.day, label: d.day.slice(5), values: { accepted: d.accepted, rejectedByQuota: d.rejectedByQuota, failed: d.failed } }));
    $("days-title").textContent = "Last " + days.length + " days";
    drawBars($("chart-days"), "days", days, ["accepted", "rejectedByQuota", "failed"], 5);
    legend($("legend-days"), ["accepted", "rejectedByQuota", "failed"]);

    drawProviders($("chart-providers"), stats.deliveries);
    showLatency(stats.latency);
    const notes = ["Quota refusals are counted per day (the ledger has no per-hour figure)."];
    if (!stats.deliveryLogComplete) notes.push("Today's delivery log is larger than one read: the hourly and provider charts show its most recent part.");
    $("overview-note").textContent = notes.join(" ");
  }

  // Bucket upper bounds in seconds: "≤ 5 ms"; null is past the largest bucket.
  function bound(seconds) {
    if (seconds === null) return "> 10 s";
    return seconds < 1 ? `≤ ${fmt(Math.round(seconds * 10000) / 10)} ms` : `≤ ${fmt(seconds)} s`;
  }

  function showLatency(rows) {
    $("latency").hidden = !rows;
    if (!rows) return;
    const body = $("latency-table").tBodies[0];
    if (rows.length === 0) {
      body.replaceChildren(el("tr", {}, [el("td", { colspan: "5", className: "empty", text: "No delivery since the server started." })]));
      return;
    }
    body.replaceChildren(
      ...rows.map((r) =>
        el("tr", { "data-provider": r.provider, "data-count": r.count }, [
          el("td", { text: r.provider }),
          el("td", { className: "num", text: fmt(r.count) }),
          el("td", { className: "num", text: bound(r.p50) }),
          el("td", { className: "num", text: bound(r.p90) }),
          el("td", { className: "num", text: bound(r.p99) }),
        ])
      )
    );
  }

  function legend(node, series) {
    node.replaceChildren(...series.map((s) => el("span", { className: s, text: SERIES[s].label })));
  }

  // A stacked bar chart: one bar per point, one segment per series. Each segment carries data-series, data-key and
  // data-value (what the browser test reads), and a <title> for a tooltip.
  function drawBars(container, name, points, series, labelEvery) {
    const W = 720, H = 240, left = 44, right = 8, top = 12, bottom = 26;
    const plotW = W - left - right, plotH = H - top - bottom;
    const totals = points.map((p) => series.reduce((s, k) => s + (p.values[k] || 0), 0));
    const max = niceMax(Math.max(0, ...totals));
    const root = svg("svg", { viewBox: `0 0 ${W} ${H}`, role: "img", id: "svg-" + name, "data-chart": name, "aria-label": name + " chart" });
    for (const k of series) root.setAttribute("data-total-" + k.toLowerCase(), points.reduce((s, p) => s + (p.values[k] || 0), 0));
    for (let i = 0; i <= 4; i++) {
      const v = (max / 4) * i;
      const y = top + plotH - (plotH * i) / 4;
      root.append(svg("line", { class: i === 0 ? "axis" : "grid", x1: left, x2: W - right, y1: y, y2: y }));
      root.append(svg("text", { x: left - 6, y: y + 4, "text-anchor": "end" }, fmt(v)));
    }
    const slot = plotW / points.length;
    const barW = Math.max(2, slot * 0.72);
    points.forEach((p, i) => {
      const x = left + i * slot + (slot - barW) / 2;
      let y = top + plotH;
      const group = svg("g", { "data-key": p.key, "data-total": totals[i] });
      for (const k of series) {
        const v = p.values[k] || 0;
        const h = (plotH * v) / max;
        y -= h;
        const rect = svg("rect", { x: x.toFixed(1), y: y.toFixed(1), width: barW.toFixed(1), height: h.toFixed(1), fill: SERIES[k].color, "data-series": k, "data-key": p.key, "data-value": v });
        rect.append(svg("title", {}, `${p.key}: ${fmt(v)} ${SERIES[k].label.toLowerCase()}`));
        group.append(rect);
      }
      root.append(group);
      if (i % labelEvery === 0 || i === points.length - 1) {
        root.append(svg("text", { x: (x + barW / 2).toFixed(1), y: H - 8, "text-anchor": "middle" }, p.label));
      }
    });
    if (totals.every((v) => v === 0)) {
      root.append(svg("text", { class: "empty", x: left + plotW / 2, y: top + plotH / 2, "text-anchor": "middle" }, "No notifications yet"));
    }
    container.replaceChildren(root);
  }

  // Horizontal bars: one row per provider and outcome.
  function drawProviders(container, rows) {
    const W = 720, rowH = 26, left = 220, right = 70;
    const H = Math.max(1, rows.length) * rowH + 8;
    const root = svg("svg", { viewBox: `0 0 ${W} ${H}`, role: "img", id: "svg-providers", "data-chart": "providers", "aria-label": "deliveries by provider chart" });
    if (rows.length === 0) {
      root.append(svg("text", { class: "empty", x: W / 2, y: 20, "text-anchor": "middle" }, "No deliveries today"));
      container.replaceChildren(root);
      return;
    }
    const max = Math.max(...rows.map((r) => r.count));
    rows.forEach((r, i) => {
      const y = 4 + i * rowH;
      const w = Math.max(2, ((W - left - right) * r.count) / max);
      const color = r.outcome === "delivered" ? SERIES.accepted.color : SERIES.failed.color;
      const g = svg("g", { "data-provider": r.provider, "data-outcome": r.outcome, "data-value": r.count });
      g.append(svg("text", { x: left - 8, y: y + 17, "text-anchor": "end" }, `${r.provider} · ${r.outcome}`));
      const rect = svg("rect", { x: left, y: y + 4, width: w.toFixed(1), height: rowH - 8, rx: 3, fill: color });
      rect.append(svg("title", {}, `${r.provider} ${r.outcome}: ${fmt(r.count)}`));
      g.append(rect);
      g.append(svg("text", { class: "value", x: (left + w + 6).toFixed(1), y: y + 17 }, fmt(r.count)));
      root.append(g);
    });
    container.replaceChildren(root);
  }

  // Quotas -----------------------------------------------------------------------------------------------------------

  async function loadQuotas() {
    const data = await api("GET", "v1/quotas");
    state.quotaDay = data.day;
    state.quotas = data.quotas;
    renderQuotas();
  }

  function quotaFigures(q) {
    const r = q.rateLimits;
    return { used: r.successful, maximum: r.maximum, remaining: r.remaining, errors: r.errors, refused: Math.max(0, r.attempts - r.successful - r.errors) };
  }

  function renderQuotas() {
    const search = $("quota-search").value.trim().toLowerCase();
    const sort = $("quota-sort").value;
    let rows = state.quotas.filter((q) => !search || q.target.toLowerCase().includes(search) || (q.appId || "").toLowerCase().includes(search));
    const f = (q) => quotaFigures(q);
    const sorters = {
      used: (a, b) => f(b).used - f(a).used || f(b).refused - f(a).refused,
      remaining: (a, b) => f(a).remaining - f(b).remaining || f(b).used - f(a).used,
      errors: (a, b) => f(b).errors - f(a).errors,
      token: (a, b) => (a.target < b.target ? -1 : a.target > b.target ? 1 : 0),
    };
    rows = rows.slice().sort(sorters[sort] || sorters.used);
    const body = $("quota-table").tBodies[0];
    if (rows.length === 0) {
      body.replaceChildren(el("tr", {}, [el("td", { colspan: "6", className: "empty", text: state.quotas.length ? "No token matches." : "No usage recorded today." })]));
    } else {
      body.replaceChildren(...rows.map(quotaRow));
    }
    $("quota-note").textContent = `UTC day ${state.quotaDay} · ${rows.length} of ${state.quotas.length} tokens`;
  }

  function quotaRow(q) {
    const x = quotaFigures(q);
    const tr = el("tr", { "data-token": q.target, "data-used": x.used, "data-maximum": x.maximum, "data-override": q.limitOverride === null ? "" : q.limitOverride });
    if (x.remaining === 0) tr.className = "over";
    const meter = el("meter", { min: "0", max: String(Math.max(1, x.maximum)), value: String(Math.min(x.used, Math.max(1, x.maximum))), low: String(x.maximum * 0.8), high: String(x.maximum * 0.95), optimum: "0" });
    const setButton = el("button", { type: "button", className: "small quiet", text: "Set limit", "data-action": "set-limit" });
    setButton.addEventListener("click", () => setLimit(q));
    const actions = [setButton];
    if (q.limitOverride !== null) {
      const clear = el("button", { type: "button", className: "small quiet", text: "Clear", "data-action": "clear-limit" });
      clear.addEventListener("click", () => clearLimit(q));
      actions.push(clear);
    }
    const reset = el("button", { type: "button", className: "small danger", text: "Reset day", "data-action": "reset" });
    reset.addEventListener("click", () => resetDay(q));
    actions.push(reset);
    tr.append(
      el("td", { className: "token" }, [el("span", { text: shortToken(q.target) }), el("small", { text: q.appId || "" })]),
      el("td", {}, [el("div", { className: "usage" }, [meter, el("span", { className: "figures", text: `${fmt(x.used)} / ${fmt(x.maximum)}` })])]),
      el("td", { className: "num", text: fmt(x.refused) }),
      el("td", { className: "num", text: fmt(x.errors) }),
      el("td", {}, q.limitOverride === null ? [el("span", { text: "—" })] : [el("span", { className: "badge", text: fmt(q.limitOverride) })]),
      el("td", { className: "actions" }, actions)
    );
    return tr;
  }

  function applyQuotaAnswer(answer) {
    const i = state.quotas.findIndex((q) => q.target === answer.target);
    const today = (answer.days || []).find((d) => d.day === state.quotaDay);
    const updated = {
      day: state.quotaDay,
      target: answer.target,
      appId: today ? today.appId : i >= 0 ? state.quotas[i].appId : null,
      limitOverride: answer.limitOverride,
      noticeSent: today ? today.noticeSent : false,
      rateLimits: answer.rateLimits,
    };
    if (i >= 0) state.quotas[i] = updated;
    else state.quotas.push(updated);
    renderQuotas();
  }

  async function setLimit(q) {
    const current = quotaFigures(q).maximum;
    const limit = await ask({
      title: "Set a daily limit",
      text: `Daily limit for ${shortToken(q.target)} (now ${fmt(current)}${q.limitOverride === null ? ", the default" : ", an override"}). It applies from the next request.`,
      limit: current,
      ok: "Set limit",
    });
    if (limit === null) return;
    await guarded(async () => {
      const answer = await api("PUT", "v1/limits/" + encodeURIComponent(q.target), { limit });
      applyQuotaAnswer(answer);
      setStatus(`Limit of ${shortToken(q.target)} set to ${fmt(limit)}.`, "ok");
    });
  }

  async function clearLimit(q) {
    if ((await ask({ title: "Clear the override", text: `Remove the limit override of ${shortToken(q.target)}? The configured limit applies again.`, ok: "Clear override" })) === null) return;
    await guarded(async () => {
      const answer = await api("DELETE", "v1/limits/" + encodeURIComponent(q.target));
      applyQuotaAnswer(answer);
      setStatus(`Override of ${shortToken(q.target)} cleared.`, "ok");
    });
  }

  async function resetDay(q) {
    if ((await ask({ title: "Reset today's counters", text: `Delete today's counters of ${shortToken(q.target)}? Its quota starts again from zero.`, ok: "Reset day" })) === null) return;
    await guarded(async () => {
      const answer = await api("POST", "v1/quotas/" + encodeURIComponent(q.target) + "/reset");
      if ((answer.days || []).some((d) => d.day === state.quotaDay)) applyQuotaAnswer(answer);
      else {
        state.quotas = state.quotas.filter((x) => x.target !== q.target);
        renderQuotas();
      }
      setStatus(`Today's counters of ${shortToken(q.target)} reset.`, "ok");
    });
  }

  // Dead tokens ------------------------------------------------------------------------------------------------------

  async function loadDeadTokens() {
    const data = await api("GET", "v1/dead-tokens");
    const body = $("dead-table").tBodies[0];
    if (data.deadTokens.length === 0) {
      body.replaceChildren(el("tr", {}, [el("td", { colspan: "6", className: "empty", text: "No dead tokens." })]));
    } else {
      body.replaceChildren(
        ...data.deadTokens.map((d) => {
          const forget = el("button", { type: "button", className: "small quiet", text: "Forget", "data-action": "forget" });
          forget.addEventListener("click", () => forgetDead(d));
          return el("tr", { "data-token": d.target }, [
            el("td", { className: "token", text: shortToken(d.target) }),
            el("td", { text: d.provider }),
            el("td", { text: d.reason, title: d.message || "" }),
            el("td", { text: d.markedAt.slice(0, 16).replace("T", " ") }),
            el("td", { text: d.expiresAt.slice(0, 16).replace("T", " ") }),
            el("td", { className: "actions" }, [forget]),
          ]);
        })
      );
    }
    $("dead-note").textContent = `${data.count} dead token${data.count === 1 ? "" : "s"} (times in UTC).`;
  }

  async function forgetDead(d) {
    if ((await ask({ title: "Forget a dead token", text: `Forget that ${shortToken(d.target)} is dead? The next request for it goes to ${d.provider} again.`, ok: "Forget" })) === null) return;
    await guarded(async () => {
      await api("DELETE", "v1/dead-tokens/" + encodeURIComponent(d.target));
      setStatus(`${shortToken(d.target)} forgotten.`, "ok");
      await loadDeadTokens();
    });
  }

  // Matrix -----------------------------------------------------------------------------------------------------------

  async function loadMatrix() {
    const data = await api("GET", "v1/matrix/queue");
    $("matrix-cards").replaceChildren(card("Queued", fmt(data.queued), "", "queued"), card("Due now", fmt(data.due), "", "due"));
    const body = $("matrix-table").tBodies[0];
    if (data.items.length === 0) {
      body.replaceChildren(el("tr", {}, [el("td", { colspan: "5", className: "empty", text: "The retry queue is empty." })]));
    } else {
      body.replaceChildren(
        ...data.items.map((m) =>
          el("tr", {}, [
            el("td", { text: m.appId }),
            el("td", { className: "token", text: m.pushkey }),
            el("td", { className: "num", text: fmt(m.attempts) }),
            el("td", { text: m.nextAttemptAt.slice(0, 19).replace("T", " ") }),
            el("td", { text: m.lastError || "" }),
          ])
        )
      );
    }
    $("matrix-note").textContent = data.queued > data.items.length ? `Showing the first ${data.items.length}.` : "";
  }

  // Providers --------------------------------------------------------------------------------------------------------

  async function loadProviders() {
    const report = await api("GET", "v1/setup");
    $("providers-table").tBodies[0].replaceChildren(
      ...report.checks.map((c) =>
        el("tr", { "data-subject": c.subject, "data-passed": String(c.passed) }, [
          el("td", { text: c.subject }),
          el("td", { text: c.check }),
          el("td", { className: c.passed ? "ok" : "fail", text: c.passed ? "ok" : "failed" }),
          el("td", {}, c.remedy && !c.passed ? [el("div", { text: c.detail }), el("div", { className: "remedy", text: "→ " + c.remedy })] : [el("div", { text: c.detail })]),
        ])
      )
    );
    const failed = report.checks.filter((c) => !c.passed).length;
    $("providers-note").textContent = failed === 0 ? "Every check passed." : `${failed} check${failed === 1 ? "" : "s"} failed: each says what to do.`;
  }

  // Confirm dialog ---------------------------------------------------------------------------------------------------

  // Resolves to the limit (a number) or true when confirmed, null when cancelled.
  function ask(options) {
    const dialog = $("confirm-dialog");
    const input = $("confirm-limit");
    const withLimit = options.limit !== undefined;
    $("confirm-title").textContent = options.title;
    $("confirm-text").textContent = options.text;
    $("confirm-ok").textContent = options.ok || "Confirm";
    input.hidden = !withLimit;
    $("confirm-limit-label").hidden = !withLimit;
    input.required = withLimit;
    if (withLimit) input.value = String(options.limit);
    return new Promise((resolve) => {
      const form = $("confirm-form");
      const done = (value) => {
        form.removeEventListener("submit", onSubmit);
        $("confirm-cancel").removeEventListener("click", onCancel);
        dialog.removeEventListener("cancel", onCancel);
        if (dialog.open) dialog.close();
        resolve(value);
      };
      const onSubmit = (event) => {
        event.preventDefault();
        if (!withLimit) return done(true);
        const n = Number(input.value);
        if (!Number.isInteger(n) || n < 0 || n > 10000000) {
          input.setCustomValidity("A whole number from 0 to 10000000.");
          input.reportValidity();
          return;
        }
        input.setCustomValidity("");
        done(n);
      };
      const onCancel = (event) => {
        event.preventDefault();
        done(null);
      };
      form.addEventListener("submit", onSubmit);
      $("confirm-cancel").addEventListener("click", onCancel);
      dialog.addEventListener("cancel", onCancel);
      dialog.showModal();
      (withLimit ? input : $("confirm-ok")).focus();
    });
  }

  // ---- start -----------------------------------------------------------------------------------------------------

  document.addEventListener("DOMContentLoaded", () => {
    $("login-form").addEventListener("submit", async (event) => {
      event.preventDefault();
      const token = $("token").value.trim();
      if (!token) {
        $("login-message").textContent = "Enter the admin token.";
        return;
      }
      sessionStorage.setItem(TOKEN_KEY, token);
      $("token").value = "";
      $("login-button").disabled = true;
      try {
        await api("GET", "v1/stats?days=1");
        showApp();
        await showView(currentViewFromHash());
      } catch (e) {
        showLogin(e instanceof Unauthorized ? e.message : "The server could not be reached: " + e.message);
      } finally {
        $("login-button").disabled = false;
      }
    });
    $("sign-out").addEventListener("click", () => showLogin("Signed out."));
    for (const b of document.querySelectorAll(".refresh")) b.addEventListener("click", () => loadView(state.currentView));
    $("quota-search").addEventListener("input", renderQuotas);
    $("quota-sort").addEventListener("change", renderQuotas);
    window.addEventListener("hashchange", () => {
      if (!$("app").hidden) showView(currentViewFromHash());
    });
    if (sessionStorage.getItem(TOKEN_KEY)) {
      showApp();
      showView(currentViewFromHash());
    } else {
      showLogin("");
    }
  });
})();
