//! The tray: what it shows (a plain model, tested without a display) and the
//! Tauri menu built from it (docs/window.md, "Tray").
//!
//! In order: the five modes in the Shift+Tab order (the current one checked),
//! the agents (a submenu, the active one checked), the pending approvals
//! (disabled when there are none; opens the window on the queue), Show or
//! Hide window, Quit. The tooltip names the project, mode and agent; the icon
//! carries a badge while an approval waits. The menu follows every change,
//! whichever surface made it.

use std::sync::{Arc, Mutex};

use decode_core::display::one_line;
use decode_core::state::Snapshot;
use decode_policy::Mode;
use tauri::image::Image;
use tauri::menu::{CheckMenuItem, Menu, MenuItem, PredefinedMenuItem, Submenu};
use tauri::tray::{TrayIcon, TrayIconBuilder};
use tauri::{AppHandle, Wry};

/// One item of the tray's menu, as its id says it (the one place ids are written and
/// read).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum TrayItem {
    Mode(Mode),
    Agent(String),
    Pending,
    Show,
    Quit,
}

impl TrayItem {
    pub(crate) fn id(&self) -> String {
        match self {
            TrayItem::Mode(m) => format!("mode:{m}"),
            TrayItem::Agent(name) => format!("agent:{name}"),
            TrayItem::Pending => "pending".into(),
            TrayItem::Show => "show".into(),
            TrayItem::Quit => "quit".into(),
        }
    }

    pub(crate) fn parse(id: &str) -> Option<TrayItem> {
        if let Some(mode) = id.strip_prefix("mode:") {
            return mode.parse().ok().map(TrayItem::Mode);
        }
        if let Some(name) = id.strip_prefix("agent:") {
            return Some(TrayItem::Agent(name.to_string()));
        }
        match id {
            "pending" => Some(TrayItem::Pending),
            "show" => Some(TrayItem::Show),
            "quit" => Some(TrayItem::Quit),
            _ => None,
        }
    }
}

/// What the tray shows at one moment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct TrayModel {
    /// The five modes in Shift+Tab order, with whether each is current.
    pub modes: Vec<(Mode, bool)>,
    /// The modes the managed settings turned off: shown greyed out, not chosen.
    pub disabled_modes: Vec<Mode>,
    /// The agents' names (escaped for the menu), with whether each is active.
    pub agents: Vec<(String, String, bool)>,
    /// "No pending approvals" / "1 pending approval" / "3 pending approvals".
    pub pending_label: String,
    pub pending_enabled: bool,
    /// "Show window" or "Hide window".
    pub show_label: &'static str,
    pub tooltip: String,
    /// The badged icon (an approval waits).
    pub badge: bool,
}

impl TrayModel {
    pub(crate) fn new(snap: &Snapshot, pending: usize, window_visible: bool) -> TrayModel {
        let project = std::path::Path::new(&snap.project)
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| snap.project.clone());
        let pending_label = match pending {
            0 => "No pending approvals".to_string(),
            1 => "1 pending approval".to_string(),
            n => format!("{n} pending approvals"),
        };
        let mut tooltip = format!(
            "Decode — {} · mode {} · agent {}",
            one_line(&project),
            snap.mode,
            one_line(&snap.agent)
        );
        if pending > 0 {
            tooltip.push_str(&format!(" · {pending_label}"));
        }
        TrayModel {
            modes: Mode::ALL.iter().map(|m| (*m, *m == snap.mode)).collect(),
            disabled_modes: snap.disabled_modes.clone(),
            agents: snap
                .agents
                .iter()
                .map(|a| {
                    (
                        a.name.clone(),
                        one_line(&a.name).into_owned(),
                        a.name == snap.agent,
                    )
                })
                .collect(),
            pending_label,
            pending_enabled: pending > 0,
            show_label: if window_visible {
                "Hide window"
            } else {
                "Show window"
            },
            tooltip,
            badge: pending > 0,
        }
    }
}

/// The built tray: its items, kept to follow changes.
pub(crate) struct Tray {
    icon: TrayIcon<Wry>,
    modes: Vec<(Mode, CheckMenuItem<Wry>)>,
    agents_menu: Submenu<Wry>,
    agents: Mutex<Vec<(String, CheckMenuItem<Wry>)>>,
    pending: MenuItem<Wry>,
    show: MenuItem<Wry>,
    shown: Mutex<Option<TrayModel>>,
}

const ICON: &[u8] = include_bytes!("../../icons/tray.png");
const ICON_PENDING: &[u8] = include_bytes!("../../icons/tray-pending.png");

fn icon(badge: bool) -> tauri::Result<Image<'static>> {
    Image::from_bytes(if badge { ICON_PENDING } else { ICON })
}

impl Tray {
    /// Builds the tray from `model`; `on_menu` gets each chosen item.
    pub(crate) fn build(
        app: &AppHandle,
        model: &TrayModel,
        on_menu: impl Fn(&AppHandle, TrayItem) + Send + Sync + 'static,
    ) -> tauri::Result<Arc<Tray>> {
        let mut modes = Vec::new();
        for (mode, current) in &model.modes {
            let item = CheckMenuItem::with_id(
                app,
                TrayItem::Mode(*mode).id(),
                format!("Mode: {mode}"),
                !model.disabled_modes.contains(mode),
                *current,
                None::<&str>,
            )?;
            modes.push((*mode, item));
        }
        let agents_menu = Submenu::with_id(app, "agents", "Agent", true)?;
        let pending = MenuItem::with_id(
            app,
            TrayItem::Pending.id(),
            &model.pending_label,
            model.pending_enabled,
            None::<&str>,
        )?;
        let show = MenuItem::with_id(
            app,
            TrayItem::Show.id(),
            model.show_label,
            true,
            None::<&str>,
        )?;
        let quit = MenuItem::with_id(app, TrayItem::Quit.id(), "Quit Decode", true, None::<&str>)?;
        let sep1 = PredefinedMenuItem::separator(app)?;
        let sep2 = PredefinedMenuItem::separator(app)?;
        let mut entries: Vec<&dyn tauri::menu::IsMenuItem<Wry>> = Vec::new();
        for (_, item) in &modes {
            entries.push(item);
        }
        entries.push(&sep1);
        entries.push(&agents_menu);
        entries.push(&pending);
        entries.push(&sep2);
        entries.push(&show);
        entries.push(&quit);
        let menu = Menu::with_items(app, &entries)?;
        let icon = TrayIconBuilder::with_id("decode")
            .icon(icon(model.badge)?)
            .tooltip(&model.tooltip)
            .menu(&menu)
            .on_menu_event(
                move |app, event| match TrayItem::parse(event.id().as_ref()) {
                    Some(item) => on_menu(app, item),
                    None => tracing::warn!(id = event.id().as_ref(), "unknown tray item"),
                },
            )
            .build(app)?;
        let tray = Arc::new(Tray {
            icon,
            modes,
            agents_menu,
            agents: Mutex::new(Vec::new()),
            pending,
            show,
            shown: Mutex::new(None),
        });
        Ok(tray)
    }

    /// Makes the tray show `model`, changing only what differs from what it
    /// shows now (a click on a check item toggles it; this puts it back).
    pub(crate) fn show(&self, app: &AppHandle, model: &TrayModel) -> tauri::Result<()> {
        let mut shown = self.shown.lock().unwrap_or_else(|p| p.into_inner());
        let before = shown.take();
        let mut agents = self.agents.lock().unwrap_or_else(|p| p.into_inner());
        let same_agents = before.as_ref().is_some_and(|b| {
            b.agents
                .iter()
                .map(|a| &a.0)
                .eq(model.agents.iter().map(|a| &a.0))
        });
        if !same_agents {
            // The catalog changed (or this is the first show): rebuild the submenu.
            for (_, item) in agents.drain(..) {
                let _ = self.agents_menu.remove(&item);
            }
            for (name, label, active) in &model.agents {
                let item = CheckMenuItem::with_id(
                    app,
                    TrayItem::Agent(name.clone()).id(),
                    label,
                    true,
                    *active,
                    None::<&str>,
                )?;
                self.agents_menu.append(&item)?;
                agents.push((name.clone(), item));
            }
        }
        for (mode, item) in &self.modes {
            item.set_checked(model.modes.iter().any(|(m, c)| m == mode && *c))?;
            item.set_enabled(!model.disabled_modes.contains(mode))?;
        }
        for (name, item) in agents.iter() {
            item.set_checked(model.agents.iter().any(|(n, _, a)| n == name && *a))?;
        }
        if before
            .as_ref()
            .map(|b| (&b.pending_label, b.pending_enabled))
            != Some((&model.pending_label, model.pending_enabled))
        {
            self.pending.set_text(&model.pending_label)?;
            self.pending.set_enabled(model.pending_enabled)?;
        }
        if before.as_ref().map(|b| b.show_label) != Some(model.show_label) {
            self.show.set_text(model.show_label)?;
        }
        if before.as_ref().map(|b| &b.tooltip) != Some(&model.tooltip) {
            self.icon.set_tooltip(Some(&model.tooltip))?;
        }
        if before.as_ref().map(|b| b.badge) != Some(model.badge) {
            self.icon.set_icon(Some(icon(model.badge)?))?;
        }
        *shown = Some(model.clone());
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn tray_ids_read_back_as_the_items_they_name() {
        use super::TrayItem;
        use decode_policy::Mode;
        for item in [
            TrayItem::Mode(Mode::Bypass),
            TrayItem::Agent("code-reviewer".into()),
            TrayItem::Agent("a:b".into()),
            TrayItem::Pending,
            TrayItem::Show,
            TrayItem::Quit,
        ] {
            assert_eq!(TrayItem::parse(&item.id()), Some(item));
        }
        assert_eq!(TrayItem::parse("mode:nope"), None);
        assert_eq!(TrayItem::parse("bogus"), None);
    }

    use super::*;
    use decode_protocol::AgentSummary;

    fn snap(mode: Mode, agent: &str) -> Snapshot {
        Snapshot {
            agent: agent.into(),
            mode,
            agents: ["build", "plan", "evil\u{1b}]0;x\u{7}"]
                .iter()
                .map(|n| AgentSummary {
                    name: n.to_string(),
                    description: String::new(),
                })
                .collect(),
            project: "/work/my-app".into(),
            trusted: true,
            disabled_modes: Vec::new(),
        }
    }

    #[test]
    fn modes_come_in_shift_tab_order_with_the_current_one_checked() {
        let m = TrayModel::new(&snap(Mode::Auto, "build"), 0, true);
        let names: Vec<String> = m.modes.iter().map(|(m, _)| m.to_string()).collect();
        assert_eq!(names, ["default", "edit", "plan", "auto", "bypass"]);
        let checked: Vec<bool> = m.modes.iter().map(|(_, c)| *c).collect();
        assert_eq!(checked, [false, false, false, true, false]);
    }

    #[test]
    fn agents_are_listed_escaped_with_the_active_one_checked() {
        let m = TrayModel::new(&snap(Mode::Default, "plan"), 0, true);
        assert_eq!(m.agents.len(), 3);
        assert_eq!(m.agents[1], ("plan".into(), "plan".into(), true));
        let (name, label, active) = &m.agents[2];
        assert!(name.contains('\u{1b}'), "the id keeps the real name");
        assert!(
            !label.contains('\u{1b}') && !label.contains('\u{7}'),
            "{label:?}"
        );
        assert!(!active);
    }

    #[test]
    fn pending_approvals_are_counted_and_badge_the_icon() {
        let none = TrayModel::new(&snap(Mode::Default, "build"), 0, true);
        assert_eq!(none.pending_label, "No pending approvals");
        assert!(!none.pending_enabled && !none.badge);
        let one = TrayModel::new(&snap(Mode::Default, "build"), 1, true);
        assert_eq!(one.pending_label, "1 pending approval");
        assert!(one.pending_enabled && one.badge);
        let three = TrayModel::new(&snap(Mode::Default, "build"), 3, false);
        assert_eq!(three.pending_label, "3 pending approvals");
        assert!(
            three.tooltip.ends_with("3 pending approvals"),
            "{}",
            three.tooltip
        );
    }

    #[test]
    fn the_tooltip_names_project_mode_and_agent() {
        let m = TrayModel::new(&snap(Mode::Edit, "build"), 0, true);
        assert_eq!(m.tooltip, "Decode — my-app · mode edit · agent build");
        assert_eq!(m.show_label, "Hide window");
        assert_eq!(
            TrayModel::new(&snap(Mode::Edit, "build"), 0, false).show_label,
            "Show window"
        );
    }
}
