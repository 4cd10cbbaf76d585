// Sortable tables and the language switch. No network, no libraries.
(function () {
  "use strict";
  function key(cell) {
    var raw = cell.getAttribute("data-sort");
    var text = raw !== null ? raw : cell.textContent.trim();
    var num = Number(text);
    return text !== "" && !isNaN(num) ? { n: num } : { s: text.toLowerCase() };
  }
  function compare(a, b) {
    if (a.n !== undefined && b.n !== undefined) return a.n - b.n;
    if (a.n !== undefined) return -1;
    if (b.n !== undefined) return 1;
    return a.s < b.s ? -1 : a.s > b.s ? 1 : 0;
  }
  function sortTable(table, col, dir) {
    var body = table.tBodies[0];
    if (!body) return;
    var rows = Array.prototype.slice.call(body.rows);
    var indexed = rows.map(function (row, i) { return { row: row, i: i, k: key(row.cells[col]) }; });
    indexed.sort(function (x, y) {
      var c = compare(x.k, y.k);
      return (dir === "descending" ? -c : c) || x.i - y.i;  // stable
    });
    indexed.forEach(function (x) { body.appendChild(x.row); });
    var heads = table.tHead.rows[0].cells;
    for (var i = 0; i < heads.length; i++) heads[i].removeAttribute("aria-sort");
    heads[col].setAttribute("aria-sort", dir);
    table.setAttribute("data-sorted-by", col + ":" + dir);
  }
  function setLang(lang) {
    document.body.classList.remove("lang-en", "lang-zh");
    document.body.classList.add("lang-" + lang);
    document.documentElement.setAttribute("lang", lang === "zh" ? "zh-CN" : "en");
  }
  document.addEventListener("DOMContentLoaded", function () {
    var tables = document.querySelectorAll("table.sortable");
    Array.prototype.forEach.call(tables, function (table) {
      var heads = table.tHead.rows[0].cells;
      Array.prototype.forEach.call(heads, function (th, col) {
        th.setAttribute("tabindex", "0");
        th.addEventListener("click", function () {
          var next = th.getAttribute("aria-sort") === "ascending" ? "descending" : "ascending";
          sortTable(table, col, next);
        });
      });
      var initial = table.getAttribute("data-default-sort");
      if (initial !== null) sortTable(table, Number(initial), table.getAttribute("data-default-dir") || "ascending");
    });
    var hash = (location.hash || "").replace("#", "");
    if (hash === "en" || hash === "zh") setLang(hash);
    var button = document.getElementById("lang-switch");
    if (button) button.addEventListener("click", function () {
      setLang(document.body.classList.contains("lang-zh") ? "en" : "zh");
    });
  });
})();
