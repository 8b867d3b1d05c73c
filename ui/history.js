// Streamlit writes a bound widget's new value into the URL with history.replaceState, so the
// browser's Back button would leave the app instead of undoing the change. Turn each such
// change into its own history entry. Streamlit also rewrites the query just before it pushes a
// new page (dropping the old page's keys): that rewrite is undone, so Back returns to the old
// page with its settings. Installed once per tab.
(function () {
  if (window.__capeHistory) return;
  window.__capeHistory = true;
  const replace = history.replaceState.bind(history);
  const push = history.pushState.bind(history);
  let pending = null; // {before, state, url, timer}
  function settle() {
    if (!pending) return;
    const p = pending;
    pending = null;
    clearTimeout(p.timer);
    replace(p.state, "", p.before);
    push(p.state, "", p.url);
  }
  history.replaceState = function (state, title, url) {
    if (url) {
      const next = new URL(url, location.href);
      if (next.pathname === location.pathname && next.search !== location.search) {
        if (!pending) {
          pending = {before: location.href, state: state, url: null, timer: null};
        }
        clearTimeout(pending.timer);
        pending.url = next.href;
        pending.state = state;
        replace(state, title, url);
        pending.timer = setTimeout(settle, 250);
        return;
      }
    }
    return replace(state, title, url);
  };
  let lastPush = 0;
  history.pushState = function (state, title, url) {
    if (pending) {  // a page change right after a query rewrite: keep the old entry as it was
      clearTimeout(pending.timer);
      replace(history.state, "", pending.before);
      pending = null;
    }
    // A page change pushes twice in a row (the old page without its keys, then the new
    // page): one entry is enough, so Back returns to the old page with its keys.
    const now = performance.now();
    const quick = now - lastPush < 200;
    lastPush = now;
    return quick ? replace(state, title, url) : push(state, title, url);
  };
  window.addEventListener("popstate", function () {
    if (pending) { clearTimeout(pending.timer); pending = null; }
  }, true);
})();
