// A page opened from a link inside the app starts at its top (issue #49). Streamlit changes
// pages without reloading the document, and its main container (the element that scrolls)
// keeps its scroll position: the plan's "Take-away" link, clicked near the bottom of the
// lecturer's page, opened the glossary three screens down. On a change of page (a pushState
// of another path), the main container goes back to the top, unless the address names a
// section to land on (ui/sections.py scrolls to it once the page has drawn). Installed once
// per tab after ui/history.js, whose pushState it wraps (ui/state.py, install_history);
// tests/browser/test_browser_plan.py clicks the plan's links from far down the lecturer's page.
//
// No "less than" sign followed by a letter or a slash anywhere in this file: Streamlit's HTML
// sanitizer drops a script whose text holds one (tests/app/test_student_items.py).
(function () {
  if (window.__capePageTop) return;
  window.__capePageTop = true;
  const push = history.pushState;
  function top() {
    const main = document.querySelector("[data-testid='stMain']");
    if (main) main.scrollTop = 0;
  }
  history.pushState = function (state, title, url) {
    const before = location.pathname;
    const result = push.apply(history, arguments);
    const next = new URL(location.href);
    if (next.pathname !== before && !next.searchParams.has("section")) {
      top();
      requestAnimationFrame(top); // once more, after the old page's elements are gone
    }
    return result;
  };
})();
