package reference

import "testing"

// TestWaitersHandOverTheRecord: a duplicate that saw the record of an
// attempt of this process processing learns, subscribing, that the
// attempt has yet to notify, so it need not read the record again; the
// notification brings the record the attempt wrote. Once the attempt
// notified, or for another attempt's record, it must read.
func TestWaitersHandOverTheRecord(t *testing.T) {
	ws := waiters{m: map[string]*waiter{}}
	ws.running("id", "token")
	w, running := ws.subscribeTo("id", "token")
	if !running {
		t.Fatal("the attempt of this process holding the record is not running")
	}
	if other, running := ws.subscribeTo("id", "another-token"); running || other != w {
		t.Errorf("another attempt's record: running %v, same waiter %v; want not running, the same waiter", running, other == w)
	} else {
		ws.unsubscribe("id", other)
	}
	ws.unsubscribe("id", w)
	if len(ws.m) != 1 {
		t.Fatalf("the entry of the running attempt went away with its last waiter: %v", ws.m)
	}
	w, _ = ws.subscribeTo("id", "token")
	ended := Record{State: Completed, Token: "token", Response: Response{Status: 201}}
	ws.notify("id", ended)
	select {
	case <-w.done:
	default:
		t.Fatal("the notification did not wake the waiter")
	}
	if w.ended.State != Completed || w.ended.Token != "token" || w.ended.Response.Status != 201 {
		t.Errorf("the waiter was handed %+v, want %+v", w.ended, ended)
	}
	ws.unsubscribe("id", w)
	late, running := ws.subscribeTo("id", "token")
	if running {
		t.Error("a duplicate subscribing after the notification was told the attempt still runs")
	}
	ws.unsubscribe("id", late)
	if len(ws.m) != 0 {
		t.Errorf("entries left behind: %v", ws.m)
	}
}
