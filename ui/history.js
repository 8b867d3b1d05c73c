// Streamlit writes a bound widget's new value into the URL with history.replaceState, so the
// browser's Back button would leave the app instead of undoing the change. Make each change the
// user makes its own history entry, and nothing else. Installed once per tab; docs/state.md.
//
// One rule, no timers: a URL write is the user's change only if the user acted (a key, a click,
// a touch) since the app last wrote the URL. The first write after an action starts a new entry;
// every later write until the next action (the server's answer: a table rewritten after S moved,
// defaults dropped from a link, the URL canonicalised after Back) completes that same entry in
// place. Timers guessed how long a server takes and lost the race on a busy one: the answer
// became an entry of its own (half-built) and a rewrite after Back discarded the Forward list.
(function () {
  if (window.__capeHistory) return;
  window.__capeHistory = true;
  const replace = history.replaceState.bind(history);
  const push = history.pushState.bind(history);
  let acted = false; // the user acted since the app last wrote the URL
  let made = false; // this action's first write made a new entry (undone by a page change)
  function act() {
    if (window.__capeRerunKey) return; // ui/scheme.js's rerun key, not the user's
    acted = true;
    made = false;
  }
  for (const type of ["pointerdown", "keydown"]) window.addEventListener(type, act, true);

  // Keys of another page in a write to this path are stale. Streamlit writes the server's
  // last query with the *current* path, and on a page change the old page's query with the
  // new path: on a busy server the answer for the page just left arrives after Back and made
  // /averaging?pca_eps=… (test_history_js.py). Each page owns one prefix (docs/state.md).
  const prefixes = window.__capePrefixes || {};
  const owners = new Set(Object.values(prefixes));
  function owner(key) {
    const cut = key.indexOf("_");
    return cut > 0 ? key.slice(0, cut + 1) : "";
  }
  // [url without other pages' keys, whether it had any and none of its own page's]
  function clean(url) {
    const next = new URL(url, location.href);
    const own = prefixes[next.pathname.split("/").pop()];
    const keys = [...next.searchParams.keys()];
    const foreign = keys.filter((k) => owners.has(owner(k)) && owner(k) !== own);
    if (!foreign.length) return [url, false];
    for (const key of new Set(foreign)) next.searchParams.delete(key);
    return [next.toString(), !keys.some((k) => own && owner(k) === own)];
  }

  // A same-page URL change: a new entry if it is the user's, else the current one, rewritten.
  function write(state, title, url) {
    let stale;
    [url, stale] = clean(url);
    if (stale) return undefined; // only another page's keys: an answer for a page left before
    if (acted && new URL(url, location.href).href !== location.href) {
      acted = false;
      made = true;
      return push(state, title, url);
    }
    return replace(state, title, url);
  }
  history.replaceState = function (state, title, url) {
    if (url && new URL(url, location.href).pathname === location.pathname) {
      return write(state, title, url);
    }
    return replace(state, title, url);
  };
  // Streamlit pushes the same path when the server answers a page change or a preset, and,
  // before a page change, the current path once more (with the old or the next page's keys).
  history.pushState = function (state, title, url) {
    const next = new URL(url, location.href);
    if (next.pathname === location.pathname) return write(state, title, url);
    url = clean(url)[0]; // the new page's address, without the old page's keys
    acted = false; // the new page's first writes complete its entry
    if (made) {
      // The click that changes the page first rewrote the old page's address: that entry is
      // not a state anyone chose; the new page takes its place, the old entry stays as it was.
      made = false;
      return replace(state, title, url);
    }
    return push(state, title, url);
  };
  window.addEventListener("popstate", function () {
    acted = false; // the app's rewrite of a restored URL keeps the Forward list
    made = false;
  }, true);
})();
