// Streamlit's sidebar navigation (st.navigation with sections, Streamlit 1.67) nests each
// section in a div inside its list: ul > div > (header "Learn", li, li, …), ul > div > ….
// A ul may only hold li elements and an li must sit in a list, so axe-core reports two
// serious violations on every page ("list", "listitem"), and a screen reader hears one list
// whose entries are not items, with page links outside any list (issue #49). This gives the
// markup the structure it shows: the outer ul becomes presentational (role "none") and each
// section's div a list named by its header (role "list", aria-labelledby), so each section
// reads as "Learn, list, 7 items". Only ARIA attributes are added, no node is moved (React
// owns them); the fix is re-applied whenever Streamlit redraws the navigation. A list of
// plain li elements (a navigation without sections) is left as it is. Installed once per tab
// (ui/state.py, install_history); tests/browser/test_a11y.py fails on either violation.
//
// No "less than" sign followed by a letter or a slash anywhere in this file (nor in the other
// scripts installed with it): Streamlit's HTML sanitizer (DOMPurify, SAFE_FOR_XML) silently
// drops a script whose text holds one, and with it history.js and scheme.js
// (tests/app/test_student_items.py).
(function () {
  if (window.__capeNavA11y) return;
  window.__capeNavA11y = true;
  let made = 0;
  function fix() {
    for (const list of document.querySelectorAll('[data-testid="stSidebarNavItems"]')) {
      const sections = [...list.children].filter((child) => child.tagName !== "LI");
      if (!sections.length) continue;
      if (list.getAttribute("role") !== "none") list.setAttribute("role", "none");
      for (const section of sections) {
        if (section.getAttribute("role") === "list") continue;
        section.setAttribute("role", "list");
        const header = section.querySelector('[data-testid="stNavSectionHeader"]');
        if (header) {
          if (!header.id) header.id = "cape-nav-section-" + ++made;
          section.setAttribute("aria-labelledby", header.id);
        }
      }
    }
  }
  fix();
  // child-list changes only: the attributes set here do not wake the observer again
  new MutationObserver(fix).observe(document.body, { childList: true, subtree: true });
})();
