// Opens the collapsed sections around the message a link points to.
function reveal(id) {
  for (var e = document.getElementById(id); e; e = e.parentElement) {
    if (e.tagName === "DETAILS") e.open = true;
  }
}
document.addEventListener("click", function (ev) {
  var a = ev.target.closest && ev.target.closest("a.ref");
  if (a) reveal(a.getAttribute("href").slice(1));
});
if (location.hash) reveal(location.hash.slice(1));
