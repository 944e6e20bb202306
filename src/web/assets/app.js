// Conduit's only script, and an optional one: every page works without it.
// It sends each form once, turns the editor's "Enter tags" field into pills,
// and tells tests and tools the session's state (window.__conduit_debug__,
// RealWorld's e2e contract).
;(() => {
  const body = document.body
  const user = () => {
    const raw = body?.dataset.user
    if (!raw) return null
    try {
      return JSON.parse(raw)
    } catch {
      return null
    }
  }
  window.__conduit_debug__ = {
    // the session's token is in an HttpOnly cookie: no script may read it
    getToken: () => null,
    getAuthState: () => body?.dataset.auth ?? 'unavailable',
    getCurrentUser: () => {
      const u = user()
      return u ? { ...u, token: null } : null
    },
  }

  // A form is sent once: a second click while the answer is on its way made a second article or
  // comment. Ten seconds on (a stopped load, a lost answer) it may be sent again; so may a page
  // the browser brings back from its history.
  const sentAt = new WeakMap()
  document.addEventListener('submit', (e) => {
    const at = sentAt.get(e.target)
    if (at !== undefined && Date.now() - at < 10_000) e.preventDefault()
    else sentAt.set(e.target, Date.now())
  })
  window.addEventListener('pageshow', (e) => {
    if (e.persisted) for (const form of document.forms) sentAt.delete(form)
  })

  const input = document.querySelector('input[placeholder="Enter tags"]')
  if (!input) return
  const list = input.parentElement.querySelector('.tag-list')
  const has = (name) => [...list.querySelectorAll('input[name="tag"]')].some((i) => i.value === name)
  const add = (name) => {
    if (!name || has(name)) return
    const pill = document.createElement('span')
    pill.className = 'tag-default tag-pill'
    // as the page makes it (src/web/pages/editor.ts)
    const remove = document.createElement('button')
    remove.type = 'submit'
    remove.className = 'tag-remove'
    remove.name = 'untag'
    remove.value = name
    remove.setAttribute('aria-label', `Remove the tag ${name}`)
    const icon = document.createElement('i')
    icon.className = 'ion-close-round'
    icon.setAttribute('aria-hidden', 'true')
    remove.append(icon)
    const hidden = document.createElement('input')
    hidden.type = 'hidden'
    hidden.name = 'tag'
    hidden.value = name
    pill.append(remove, document.createTextNode(name), hidden)
    list.append(pill)
  }
  input.addEventListener('keydown', (e) => {
    // an input method's Enter confirms what it composes, and is not this field's
    if (e.isComposing || (e.key !== 'Enter' && e.key !== ',')) return
    e.preventDefault()
    for (const name of input.value.split(',')) add(name.trim())
    input.value = ''
  })
  // a pill's × takes it off here (without scripts it sends the form to have it taken off)
  list.addEventListener('click', (e) => {
    const remove = e.target.closest('.tag-remove')
    if (!remove) return
    e.preventDefault()
    remove.closest('.tag-pill').remove()
    input.focus()
  })
})()
