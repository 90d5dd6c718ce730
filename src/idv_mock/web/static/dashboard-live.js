/* Live updates: poll the project's stamp; when it moves, fetch this page again and swap
   the live region only (forms above it keep what is typed). */
(function () {
  var box = document.getElementById("live");
  if (!box || !window.fetch) return;
  var pulse = box.dataset.pulse;
  var url = box.dataset.pulseUrl + "?project=" + encodeURIComponent(box.dataset.project);
  var busy = false;
  setInterval(function () {
    if (busy) return;
    busy = true;
    fetch(url, {credentials: "same-origin", cache: "no-store"})
      .then(function (r) { return r.ok ? r.json() : null; })
      .then(function (body) {
        if (!body || body.pulse === pulse) return null;
        pulse = body.pulse;
        return fetch(location.href, {credentials: "same-origin", cache: "no-store"})
          .then(function (r) { return r.ok ? r.text() : null; })
          .then(function (html) {
            if (!html) return;
            var fresh = new DOMParser().parseFromString(html, "text/html").getElementById("live");
            if (!fresh) return;
            var open = Array.prototype.map.call(
              box.querySelectorAll("details[open][data-key]"), function (d) { return d.dataset.key; });
            box.innerHTML = fresh.innerHTML;
            box.dataset.pulse = pulse;
            open.forEach(function (key) {
              var again = box.querySelector('details[data-key="' + CSS.escape(key) + '"]');
              if (again) again.open = true;
            });
          });
      })
      .catch(function () {})
      .then(function () { busy = false; });
  }, 1000);
})();
