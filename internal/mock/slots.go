package mock

import (
	"fmt"
	"net/http"
	"strconv"
)

// llamaSlots is how many slots the mock lists at GET /slots, as a
// llama-server started with --parallel 4.
const llamaSlots = 4

// listSlots answers llama-server's GET /slots: one object per slot.
func (s *Server) listSlots(w http.ResponseWriter, _ *http.Request) {
	slots := make([]map[string]any, llamaSlots)
	for i := range slots {
		slots[i] = map[string]any{"id": i, "id_task": -1, "n_ctx": 4096, "is_processing": false}
	}
	writeJSON(w, http.StatusOK, slots)
}

// eraseSlot is llama-server's POST /slots/{id}?action=erase, which empties
// that slot's cache: a reset route (the mock's prefix cache is one for
// every slot, so erasing any empties it, unless --reset-noop).
func (s *Server) eraseSlot() adminRoute {
	return adminRoute{kind: EventReset, check: checkErase, act: s.resetCache, reply: func(w http.ResponseWriter) {
		writeJSON(w, http.StatusOK, map[string]any{"n_erased": 0})
	}}
}

// checkErase validates the slot id and ?action=erase.
func checkErase(r *http.Request) error {
	id, err := strconv.Atoi(r.PathValue("id"))
	if err != nil || id < 0 || id >= llamaSlots {
		return fmt.Errorf("invalid slot id %q: the slots are 0 to %d", r.PathValue("id"), llamaSlots-1)
	}
	if a := r.URL.Query().Get("action"); a != "erase" {
		return fmt.Errorf("unsupported action %q (the mock supports erase)", a)
	}
	return nil
}
