//! The native message box of an approval, drawn with GTK in the dialog's child process
//! (docs/window.md, "Native dialogs").
//!
//! It shows the exact text it is given: the title and body are set as plain label
//! text (never as a printf format, never as Pango markup), so `%s`, `%n`, `%p` and
//! `<b>` appear as typed and nothing in them is read. GTK's own `format_secondary_text`
//! (which a dialog library called with the body as its format string) is not used.

use gtk::prelude::*;
use serde::Serialize;

/// What a built message box holds, read back from its widgets (what the person sees).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct Shown {
    pub window_title: String,
    /// The texts of the labels in the message area, in order (title, then body).
    pub labels: Vec<String>,
    pub buttons: Vec<String>,
}

/// GTK strings cannot hold NUL: a NUL that reached here (the body is escaped before,
/// so it should not) is shown as its escape rather than cutting the text short.
fn gtk_text(s: &str) -> String {
    s.replace('\0', "\\x00")
}

/// What a message box shows: a title, a text and up to three buttons.
pub(crate) struct MessageBox<'a> {
    pub title: &'a str,
    pub body: &'a str,
    pub buttons: &'a [String],
}

fn build(spec: &MessageBox<'_>) -> gtk::MessageDialog {
    let dialog = gtk::MessageDialog::builder()
        .message_type(gtk::MessageType::Warning)
        .buttons(gtk::ButtonsType::None)
        .modal(true)
        .use_markup(false)
        .secondary_use_markup(false)
        .text(gtk_text(spec.title))
        .secondary_text(gtk_text(spec.body))
        .title(gtk_text(spec.title))
        .build();
    for (i, label) in spec.buttons.iter().enumerate() {
        let id = u16::try_from(i).unwrap_or(u16::MAX);
        let button = dialog.add_button(&gtk_text(label), gtk::ResponseType::Other(id));
        // A label is never a mnemonic: an underscore shows as typed.
        if let Some(b) = button.downcast_ref::<gtk::Button>() {
            b.set_use_underline(false);
        }
    }
    // The message's labels can be selected and copied, like any text shown, and wrap
    // (at a word, or anywhere in a long word) so the box never grows off the screen.
    for label in labels_of(&dialog) {
        label.set_selectable(true);
        label.set_line_wrap(true);
        label.set_line_wrap_mode(gtk::pango::WrapMode::WordChar);
        label.set_max_width_chars(90);
    }
    dialog
}

fn labels_of(dialog: &gtk::MessageDialog) -> Vec<gtk::Label> {
    let Ok(area) = dialog.message_area().downcast::<gtk::Box>() else {
        return Vec::new();
    };
    area.children()
        .into_iter()
        .filter_map(|w| w.downcast::<gtk::Label>().ok())
        .collect()
}

/// How long a new message box ignores its buttons, like every dialog of the window
/// (a click or key meant for something else never answers it).
const INPUT_GUARD: std::time::Duration = std::time::Duration::from_millis(400);

/// Shows the message box and waits: the index of the button pressed, or `None` when
/// the box was closed.
pub(crate) fn show(spec: &MessageBox<'_>) -> Result<Option<usize>, String> {
    gtk::init().map_err(|e| format!("GTK could not start: {e}"))?;
    let dialog = build(spec);
    let ids: Vec<gtk::ResponseType> = (0..spec.buttons.len())
        .filter_map(|i| u16::try_from(i).ok().map(gtk::ResponseType::Other))
        .collect();
    for id in &ids {
        dialog.set_response_sensitive(*id, false);
    }
    let guarded = dialog.clone();
    gtk::glib::timeout_add_local_once(INPUT_GUARD, move || {
        for id in ids {
            guarded.set_response_sensitive(id, true);
        }
    });
    let response = dialog.run();
    dialog.close();
    Ok(match response {
        gtk::ResponseType::Other(i) => Some(usize::from(i)).filter(|i| *i < spec.buttons.len()),
        _ => None,
    })
}

/// Builds the message box without showing it and reads back what it would show (the
/// test of the exact-text promise: tests/native_dialog.rs).
pub(crate) fn shown(spec: &MessageBox<'_>) -> Result<Shown, String> {
    gtk::init().map_err(|e| format!("GTK could not start: {e}"))?;
    let dialog = build(spec);
    let labels = labels_of(&dialog)
        .iter()
        .map(|l| l.text().to_string())
        .collect();
    let buttons = (0..spec.buttons.len())
        .filter_map(|i| {
            let id = u16::try_from(i).ok()?;
            let widget = dialog.widget_for_response(gtk::ResponseType::Other(id))?;
            let button = widget.downcast::<gtk::Button>().ok()?;
            button.label().map(|l| l.to_string())
        })
        .collect();
    let window_title = dialog.title().map(|t| t.to_string()).unwrap_or_default();
    dialog.close();
    Ok(Shown {
        window_title,
        labels,
        buttons,
    })
}
