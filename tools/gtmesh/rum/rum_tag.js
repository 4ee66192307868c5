// gtmesh real-user measurement tag (docs/rum.md). Embed it as
//   <script async src="https://DECIDER/rum.js" data-app="APP" data-key="KEY"></script>
// After the page has loaded it asks the decider what to measure, fetches a
// small cache-busted object from each endpoint one after the other (resource
// timing: connect and time to first byte), and beacons the results in NS1's
// bulk-beacon v3 JSON. No cookies, no storage, nothing about the page or the
// user: the decider sees the beacon's source address, truncated before
// anything is kept.
(function () {
  var me = document.currentScript;
  if (!me || !window.fetch || !window.performance) return;
  var base = new URL(me.src, location.href).origin;
  var app = me.getAttribute('data-app') || '';
  var key = me.getAttribute('data-key') || '';
  var q = '?app=' + encodeURIComponent(app) + '&key=' + encodeURIComponent(key);
  var opts = { credentials: 'omit', cache: 'no-store', mode: 'cors' };

  function measure(m) {
    var url = m.url + (m.url.indexOf('?') < 0 ? '?' : '&') + 'gtmesh_rum=' +
      Date.now().toString(36) + Math.random().toString(36).slice(2);
    var t0 = performance.now();
    return fetch(url, opts).then(function (r) {
      return r.arrayBuffer().then(function () {
        var e = performance.getEntriesByName(url).pop();
        var ttfb = e && e.responseStart > 0 ? e.responseStart - e.requestStart : performance.now() - t0;
        var connect = e && e.connectEnd > 0 ? e.connectEnd - e.connectStart : 0;
        return { job: m.job, ok: r.ok, status: r.status, ttfb: Math.max(0, Math.round(ttfb)),
                 connect: Math.max(0, Math.round(connect)) };
      });
    }, function () { return { job: m.job, ok: false, status: 650 }; });
  }

  // The resolver join: a name unique to this page view under the config's
  // rum.join, resolved by the visitor's own resolver (the decider notes which
  // resolver asked); the beacon names the same view. Nothing is fetched from
  // it: the name answers NODATA.
  function viewId() {
    var b = new Uint8Array(8);
    crypto.getRandomValues(b);
    return Array.prototype.map.call(b, function (x) { return (x + 256).toString(16).slice(1); }).join('');
  }
  function resolve(join, id) {
    if (!join) return Promise.resolve();
    return fetch('https://' + id + '.' + join + '/', { mode: 'no-cors', credentials: 'omit', cache: 'no-store' })
      .then(function () {}, function () {});
  }

  function send(results, id) {
    if (!results.length) return;
    var now = String(Date.now()) + '000000';
    var ms = results.map(function (r) {
      var data = r.ok ? { detailedPerformance: { transportConnectMs: r.connect, timeToFirstByteMs: Math.max(1, r.ttfb) } }
                      : { availability: { up: false, statusCode: r.status } };
      var m = { attribution: { jobid: r.job },
                payloads: [{ version: 6, timstampEpochNs: now, statusCode: r.status, data: [data] }] };
      if (id) m.gtmeshViewId = id;
      return m;
    });
    var body = JSON.stringify({ beacons: [{ appid: app, measurements: ms }] });
    var url = base + '/api/v1/rum/beacons' + q;
    if (navigator.sendBeacon && navigator.sendBeacon(url, new Blob([body], { type: 'text/plain' }))) return;
    fetch(url, { method: 'POST', body: body, keepalive: true, credentials: 'omit',
                 headers: { 'Content-Type': 'text/plain' } });
  }

  function run() {
    fetch(base + '/api/v1/rum/config' + q, opts).then(function (r) { return r.json(); }).then(function (cfg) {
      var results = [];
      var id = cfg.join && window.crypto ? viewId() : '';
      return (cfg.measure || []).reduce(function (p, m) {
        return p.then(function () { return measure(m).then(function (r) { results.push(r); }); });
      }, resolve(id && cfg.join, id)).then(function () { send(results, id); });
    }).catch(function () {});
  }

  if (document.readyState === 'complete') setTimeout(run, 0);
  else addEventListener('load', function () { setTimeout(run, 0); });
})();
