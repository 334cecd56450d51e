// Draws every element with data-plotly="<id of a json_script element>" using plotly.js.
// The figure ({data, layout}) is built server-side; this file only hands it to Plotly.
// Charts inside content swapped in by htmx are drawn after the swap.
(function () {
  "use strict";

  var CONFIG = { responsive: true, displaylogo: false, modeBarButtonsToRemove: ["lasso2d", "select2d"] };

  function draw(el) {
    if (typeof window.Plotly === "undefined") return;
    var source = document.getElementById(el.getAttribute("data-plotly"));
    if (!source) return;
    var figure;
    try {
      figure = JSON.parse(source.textContent);
    } catch (err) {
      el.textContent = "This chart's data could not be read.";
      return;
    }
    window.Plotly.react(el, figure.data || [], figure.layout || {}, CONFIG);
  }

  function drawAll(root) {
    var scope = root && root.querySelectorAll ? root : document;
    if (scope.matches && scope.matches("[data-plotly]")) draw(scope);
    scope.querySelectorAll("[data-plotly]").forEach(draw);
  }

  window.k3charts = { draw: draw, drawAll: drawAll };

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", function () { drawAll(document); });
  } else {
    drawAll(document);
  }
  // After an htmx swap, draw the charts that came with the new content: their elements are
  // fresh, so they do not carry Plotly's .js-plotly-plot class yet; charts left in place keep
  // their drawing. afterSwap is not enough on its own: with an outerHTML swap htmx fires it on
  // the replaced (detached) target, so it never bubbles here; afterSettle fires on the new
  // elements.
  function drawNew() {
    document.querySelectorAll("[data-plotly]:not(.js-plotly-plot)").forEach(draw);
  }
  document.body.addEventListener("htmx:afterSwap", drawNew);
  document.body.addEventListener("htmx:afterSettle", drawNew);
  // Print at the page's width: redraw so charts fit the paper.
  window.addEventListener("beforeprint", function () {
    document.querySelectorAll(".js-plotly-plot").forEach(function (el) { window.Plotly.Plots.resize(el); });
  });
})();
